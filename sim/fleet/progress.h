// The progress line rank 0 shows on a terminal: simulated time, requests finished of
// total, events per wall second and an ETA -- redrawn at most a few times per second,
// on stderr so that stdout stays clean for the summary. Silent unless enabled.
//
//   Progress progress(enabled && isatty(STDERR_FILENO));
//   progress.Update(now, finished, total_or_minus_one, events);
//   progress.Done();
#pragma once

#include <chrono>
#include <cstdint>

#include "core/sim_time.h"

namespace fleetsim {

class Progress {
 public:
  explicit Progress(bool enabled);
  // `total` < 0: not known yet (the workload is still being read).
  void Update(SimTime now, int64_t finished, int64_t total, int64_t events);
  // Clears the line.
  void Done();

 private:
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_;
};

}  // namespace fleetsim
