// The progress rank 0 reports on stderr (stdout stays clean for the summary): simulated
// time, requests finished of total, events per wall second and an ETA. `fleetsim run
// --progress auto|always|never` picks the mode:
//   on a terminal (auto, always)  one line, redrawn at most four times a second, cleared
//                                 at the end;
//   otherwise, auto               a plain line every 60 s of wall time (a log or a Slurm
//                                 job's output gets a heartbeat; a short run, nothing);
//   otherwise, always             a plain line at the first update, every 10 s, and a
//                                 last one when the run ends;
//   never                         nothing.
//
//   Progress progress(ProgressMode::kAuto);   // the style follows isatty(stderr)
//   progress.Update(now, finished, total_or_minus_one, events);
//   progress.Done();
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

#include "core/sim_time.h"

namespace fleetsim {

enum class ProgressMode { kOff, kAuto, kAlways };

class Progress {
 public:
  enum class Style { kOff, kRedrawnLine, kPeriodicLines };

  explicit Progress(ProgressMode mode);
  // `first_and_last`: periodic lines also at the first update and at Done().
  Progress(Style style, std::FILE* out, std::chrono::milliseconds line_interval,
           bool first_and_last);
  // `total` < 0: not known yet (the workload is still being read).
  void Update(SimTime now, int64_t finished, int64_t total, int64_t events);
  // Clears the redrawn line, or writes the last periodic one.
  void Done();

 private:
  std::string Text(SimTime now, int64_t finished, int64_t total, int64_t events,
                   double elapsed) const;

  Style style_;
  std::FILE* out_;
  std::chrono::milliseconds interval_;
  bool first_and_last_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_;
  // The last update, for the periodic style's closing line.
  SimTime now_ = 0;
  int64_t finished_ = 0, total_ = -1, events_ = 0;
};

}  // namespace fleetsim
