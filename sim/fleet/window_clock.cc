#include "fleet/window_clock.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace fleetsim {

WindowClock::WindowClock(SimTime step, double staleness_s, SimTime max_window) : step_(step) {
  if (step < 1) throw std::invalid_argument("WindowClock: the step must be at least 1 ns");
  if (!(staleness_s > 0)) throw std::invalid_argument("WindowClock: staleness must be positive");
  max_window_ = std::max<SimTime>(1, max_window / step_) * step_;
  epoch_ =
      step_ * std::max<int64_t>(1, static_cast<int64_t>(std::ceil(staleness_s / ToSeconds(step_))));
}

Window WindowClock::WindowAt(SimTime next, SimTime after) const {
  Window w;
  w.start = std::max(after, next / step_ * step_);
  w.end = std::min((w.start / epoch_ + 1) * epoch_, w.start + max_window_);
  return w;
}

}  // namespace fleetsim
