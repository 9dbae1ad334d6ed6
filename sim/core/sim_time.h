// Simulated time: an integer count of nanoseconds. No floating-point clock, so results
// are exact and identical however the run is spread.
#pragma once

#include <cmath>
#include <cstdint>

namespace fleetsim {

using SimTime = int64_t;  // nanoseconds since the start of the run
inline constexpr SimTime kNsPerSecond = 1'000'000'000;
inline constexpr SimTime kNever = INT64_MAX;

inline SimTime SecondsToSimTime(double seconds) {
  return static_cast<SimTime>(std::llround(seconds * 1e9));
}
inline double ToSeconds(SimTime t) {
  return static_cast<double>(t) / 1e9;
}

}  // namespace fleetsim
