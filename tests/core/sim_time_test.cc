#include "core/sim_time.h"

#include <cmath>
#include <cstdint>
#include <random>

#include <gtest/gtest.h>

namespace fleetsim {
namespace {

// The inline rounding is std::llround: at halves (away from zero), just beside them, at
// whole numbers, past 2^53 where every double is whole, and on random prices.
TEST(RoundHalfAway, IsLlround) {
  const double cases[] = {0.0,
                          -0.0,
                          0.5,
                          -0.5,
                          1.5,
                          2.5,
                          -2.5,
                          std::nextafter(0.5, 0.0),
                          std::nextafter(0.5, 1.0),
                          std::nextafter(-0.5, 0.0),
                          4503599627370495.5,  // 2^52 - 0.5
                          9007199254740993.0,  // past 2^53
                          -9007199254740993.0,
                          4.0e18,
                          -4.0e18,
                          123456789.49999999,
                          123456789.5};
  for (const double x : cases)
    EXPECT_EQ(RoundHalfAway(x), std::llround(x)) << x;
  std::mt19937_64 random(11);
  std::uniform_real_distribution<double> price(-1e7, 1e9);
  std::uniform_int_distribution<int64_t> whole(-1'000'000'000, 1'000'000'000);
  for (int i = 0; i < 200000; ++i) {
    const double x = price(random);
    ASSERT_EQ(RoundHalfAway(x), std::llround(x)) << x;
    const double half = static_cast<double>(whole(random)) + 0.5;
    ASSERT_EQ(RoundHalfAway(half), std::llround(half)) << half;
  }
}

}  // namespace
}  // namespace fleetsim
