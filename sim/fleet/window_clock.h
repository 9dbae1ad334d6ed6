// The fleet's grid of simulated time (docs/DESIGN.md, "The fleet across ranks"): routing
// decisions and load snapshots happen on steps of the lookahead L (the least time between
// a gateway sending a request and an instance receiving it); a load-snapshot epoch is the
// staleness rounded up to whole steps (at least one); a window -- the time the ranks run
// between two meetings -- starts on a step at or before the next event and runs to the end
// of its epoch, or for at most max_window of it.
//
// Whatever the message kind, nothing sent inside a window may arrive before the window's
// end. A gateway's request arrives a step after it is sent; a prefill instance's hand-off
// to a decode instance may be sent anywhere in the window and arrives at least the
// hand-off lookahead later, so a disaggregated fleet caps max_window at that lookahead
// (fleet/kv_transfer.h HandOffLookahead).
//
//   WindowClock clock(/*step=*/500'000, /*staleness_s=*/0.05);   // 0.5 ms steps, 100 per epoch
//   Window w = clock.WindowAt(next_event, previous_window_end);
//   if (clock.EpochOf(w.start) != snapshot_epoch) ...;           // refresh the load views
#pragma once

#include <cstdint>

#include "core/sim_time.h"

namespace fleetsim {

// The longest window, whatever the staleness: a window's arrivals are in flight together,
// so a long staleness must not hold a long stretch of the workload in memory.
inline constexpr SimTime kMaxWindow = 1'000'000'000;

struct Window {
  SimTime start = 0;
  SimTime end = 0;
};

class WindowClock {
 public:
  // `step` >= 1 ns; `staleness_s` > 0. The window is capped at `max_window`, rounded down
  // to whole steps (at least one step).
  WindowClock(SimTime step, double staleness_s, SimTime max_window = kMaxWindow);

  SimTime step() const { return step_; }
  SimTime epoch() const { return epoch_; }
  SimTime max_window() const { return max_window_; }
  int64_t EpochOf(SimTime t) const { return t / epoch_; }

  // The window holding the next event at `next` (< kNever): from the step boundary at or
  // before it, but not before `after` (the previous window's end), to the end of that
  // step's epoch or max_window later, whichever comes first.
  Window WindowAt(SimTime next, SimTime after) const;
  // The first step boundary at or after `t` (t >= 0, t < kNever).
  SimTime StepAtOrAfter(SimTime t) const { return (t + step_ - 1) / step_ * step_; }
  // The end of the step holding `t`.
  SimTime EndOfStep(SimTime t) const { return (t / step_ + 1) * step_; }

 private:
  SimTime step_;
  SimTime epoch_;
  SimTime max_window_;
};

}  // namespace fleetsim
