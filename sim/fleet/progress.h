// The progress rank 0 reports on stderr (stdout stays clean for the summary): simulated
// time, requests finished of total, events per wall second and an ETA. On a terminal it is
// one line redrawn at most four times a second and cleared at the end; otherwise (a log
// file, a Slurm job's output) it is a plain line at the first update, then every
// `line_interval` of wall time (default 10 s), and a last line when the run ends.
// Silent unless enabled: `fleetsim run --progress auto|always|never` decides that.
//
//   Progress progress(enabled);   // the style follows isatty(stderr)
//   progress.Update(now, finished, total_or_minus_one, events);
//   progress.Done();
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>

#include "core/sim_time.h"

namespace fleetsim {

class Progress {
 public:
  enum class Style { kRedrawnLine, kPeriodicLines };

  explicit Progress(bool enabled);
  Progress(bool enabled, Style style, std::FILE* out,
           std::chrono::milliseconds line_interval = std::chrono::seconds(10));
  // `total` < 0: not known yet (the workload is still being read).
  void Update(SimTime now, int64_t finished, int64_t total, int64_t events);
  // Clears the redrawn line, or writes the last periodic one.
  void Done();

 private:
  std::string Text(SimTime now, int64_t finished, int64_t total, int64_t events,
                   double elapsed) const;

  bool enabled_;
  Style style_;
  std::FILE* out_;
  std::chrono::milliseconds interval_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_;
  // The last update, for the periodic style's closing line.
  SimTime now_ = 0;
  int64_t finished_ = 0, total_ = -1, events_ = 0;
};

}  // namespace fleetsim
