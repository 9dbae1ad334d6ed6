#include "perf/grid_table.h"

#include <gtest/gtest.h>

namespace fleetsim {
namespace {

TEST(GridTable, ExactAtPointsLinearBetweenAndCountsLookupsOutside) {
  GridTable t({{16, 32, 64}, {0, 1024}});
  for (std::size_t i = 0; i < 3; ++i) {
    for (std::size_t j = 0; j < 2; ++j)
      t.Set({i, j}, t.axis(0)[i] + 0.01 * t.axis(1)[j]);
  }
  EXPECT_DOUBLE_EQ(t.Lookup({32, 1024}), 32 + 10.24);
  EXPECT_DOUBLE_EQ(t.Lookup({48, 512}), 48 + 5.12);  // bilinear on a linear function: exact
  EXPECT_EQ(t.out_of_grid_lookups(), 0);
  EXPECT_DOUBLE_EQ(t.Lookup({128, 2048}), 128 + 20.48);  // extended last segment
  EXPECT_EQ(t.out_of_grid_lookups(), 1);
}

TEST(GridTable, ReportsTheFirstMissingPoint) {
  GridTable t({{1, 2}, {10, 20}});
  t.Set({0, 0}, 1);
  t.Set({0, 1}, 1);
  t.Set({1, 0}, 1);
  EXPECT_EQ(t.FirstMissingPoint(), "(2, 20)");
}

TEST(GridTable, FillsTheHolesOfAUnionOfSweeps) {
  // Rows at chunk 16 measured at kv 0, 16, 512; rows at chunk 24 only at 0 and 512.
  GridTable t({{16, 24}, {0, 16, 512}});
  t.Set({0, 0}, 1);
  t.Set({0, 1}, 2);
  t.Set({0, 2}, 33);
  t.Set({1, 0}, 3);
  t.Set({1, 2}, 35);
  EXPECT_EQ(t.FillHoles(), 1);
  EXPECT_TRUE(t.FirstMissingPoint().empty());
  // Along the kv axis between its own row's points: 3 + 16/512 * 32 = 4.
  EXPECT_DOUBLE_EQ(t.At({1, 1}), 4);
}

TEST(GridTable, OneSidedHolesTakeTheNearestValue) {
  GridTable t({{1, 2, 3}});
  t.Set({0}, 5);
  EXPECT_EQ(t.FillHoles(), 2);
  EXPECT_DOUBLE_EQ(t.At({2}), 5);
}

}  // namespace
}  // namespace fleetsim
