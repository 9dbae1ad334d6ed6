// Order statistics of small samples: numpy's default quantile (linear interpolation between
// the order statistics at q x (n - 1)) and the mean, with values worked by hand.
#include "core/stats.h"

#include <cmath>
#include <vector>

#include <gtest/gtest.h>

namespace fleetsim {
namespace {

TEST(Stats, QuantileInterpolatesBetweenOrderStatistics) {
  const std::vector<double> sorted{1, 2, 4, 8};  // positions 0..3
  EXPECT_DOUBLE_EQ(Quantile(sorted, 0.0), 1);
  EXPECT_DOUBLE_EQ(Quantile(sorted, 1.0), 8);
  EXPECT_DOUBLE_EQ(Quantile(sorted, 0.5), 3);         // position 1.5: 2 + 0.5 x (4 - 2)
  EXPECT_DOUBLE_EQ(Quantile(sorted, 0.25), 1.75);     // position 0.75: 1 + 0.75 x 1
  EXPECT_DOUBLE_EQ(Quantile(sorted, 0.9), 6.8);       // position 2.7: 4 + 0.7 x 4
  EXPECT_DOUBLE_EQ(Quantile(sorted, 2.0 / 3.0), 4);   // position 2: exactly the third
  EXPECT_DOUBLE_EQ(Quantile({10, 20, 30}, 0.5), 20);  // odd count: the middle one
}

TEST(Stats, QuantileOfOneValueAndOfNone) {
  EXPECT_DOUBLE_EQ(Quantile({5}, 0.0), 5);
  EXPECT_DOUBLE_EQ(Quantile({5}, 0.99), 5);
  EXPECT_DOUBLE_EQ(Quantile({5}, 1.0), 5);
  EXPECT_TRUE(std::isnan(Quantile({}, 0.5)));
}

TEST(Stats, QuantileOfTiesAndNegativeValues) {
  EXPECT_DOUBLE_EQ(Quantile({3, 3, 3, 3}, 0.37), 3);
  EXPECT_DOUBLE_EQ(Quantile({-4, -2, 0, 2}, 0.5), -1);  // position 1.5: -2 + 0.5 x 2
}

TEST(Stats, Mean) {
  EXPECT_DOUBLE_EQ(Mean({1, 2, 4, 8}), 3.75);
  EXPECT_DOUBLE_EQ(Mean({-1, 1}), 0);
  EXPECT_DOUBLE_EQ(Mean({7}), 7);
  EXPECT_DOUBLE_EQ(Mean({1, 2}), 1.5);  // unsorted or not, order does not matter
  EXPECT_DOUBLE_EQ(Mean({2, 1}), 1.5);
  EXPECT_TRUE(std::isnan(Mean({})));
}

}  // namespace
}  // namespace fleetsim
