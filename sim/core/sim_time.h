// Simulated time: an integer count of nanoseconds. No floating-point clock, so results
// are exact and identical however the run is spread.
//
// The largest simulated time is kMaxSimTime, 10^9 s (about 31.7 years) = 10^18 ns: every
// time read from input (trace arrivals, latencies, SLOs, periods, --horizon, --duration)
// must lie in [0, kMaxSimSeconds], so that the sum of any two simulated times still fits
// in an int64_t (INT64_MAX is about 9.2 x 10^18 ns). Readers refuse a larger value with a
// located error (`SimSecondsViolation` gives the words).
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

namespace fleetsim {

using SimTime = int64_t;  // nanoseconds since the start of the run
inline constexpr SimTime kNsPerSecond = 1'000'000'000;
inline constexpr SimTime kNever = INT64_MAX;
inline constexpr double kMaxSimSeconds = 1e9;
inline constexpr SimTime kMaxSimTime = 1'000'000'000 * kNsPerSecond;

// std::llround for a finite `x` within +-2^62, inline: the library call is a tenth of a
// decode step's price (bench/RESULTS.md). The truncation is exact, and so is `x - i`:
// below 2^53 both are doubles of the same sign less than 1 apart, above it `x` is whole.
inline int64_t RoundHalfAway(double x) {
  auto i = static_cast<int64_t>(x);
  const double fraction = x - static_cast<double>(i);
  if (fraction >= 0.5) ++i;
  if (fraction <= -0.5) --i;
  return i;
}

// Only for values within [0, kMaxSimSeconds] (or differences of such values): input is
// checked with SimSecondsViolation first.
inline SimTime SecondsToSimTime(double seconds) {
  return static_cast<SimTime>(std::llround(seconds * 1e9));
}
inline double ToSeconds(SimTime t) {
  return static_cast<double>(t) / 1e9;
}

// Why `seconds` is no simulated time -- "must not be negative", "must be a finite
// number", "must be at most 1e9 s (the largest simulated time)" -- or nothing when it is.
inline std::optional<std::string> SimSecondsViolation(double seconds) {
  if (std::isnan(seconds) || std::isinf(seconds)) return "must be a finite number";
  if (seconds < 0) return "must not be negative";
  if (seconds > kMaxSimSeconds) return "must be at most 1e9 s (the largest simulated time)";
  return std::nullopt;
}
// The same for a count of nanoseconds.
inline std::optional<std::string> SimTimeViolation(int64_t ns) {
  if (ns < 0) return "must not be negative";
  if (ns > kMaxSimTime) return "must be at most 1e18 ns (the largest simulated time, 1e9 s)";
  return std::nullopt;
}

}  // namespace fleetsim
