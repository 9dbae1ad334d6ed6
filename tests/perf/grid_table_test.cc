#include "perf/grid_table.h"

#include <random>
#include <stdexcept>
#include <vector>

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

// A shared position must read exactly as a lookup does, to the bit, and count the same.
TEST(GridTable, ALocatedPositionReadsAsALookupDoes) {
  GridTable a({{1, 16, 64, 1000}});
  GridTable b({{1, 16, 64, 1000}});
  GridTable single(std::vector<std::vector<double>>{{8.0}});
  for (std::size_t i = 0; i < 4; ++i) {
    a.Set({i}, 1.0 / 3 + 7.1 * static_cast<double>(i * i));
    b.Set({i}, 2.0 / 7 * static_cast<double>(i + 1));
  }
  single.Set({0}, 4.25);
  int outside = 0;
  for (double x : {0.0, 1.0, 1.5, 3.3, 16.0, 17.0, 63.9, 64.0, 999.0, 1000.0, 1234.5}) {
    const GridTable::Position at = a.Locate(x);
    EXPECT_EQ(a.LookupAt(at), a.Lookup({x})) << x;
    EXPECT_EQ(b.LookupAt(at), b.Lookup({x})) << x;
    EXPECT_EQ(single.LookupAt(single.Locate(x)), single.Lookup({x})) << x;
    outside += x < 1 || x > 1000 ? 1 : 0;
  }
  EXPECT_EQ(outside, 2);
  EXPECT_EQ(a.out_of_grid_lookups(), 2 * outside);
  EXPECT_EQ(b.out_of_grid_lookups(), 2 * outside);
  EXPECT_EQ(single.out_of_grid_lookups(), 2 * 11);  // every x but 8, which is not among them
}

// A read along the second axis with the first fixed is LookupAt's, to the bit, and counts
// the same lookups outside -- on tables whose axes have one point or several, at first-axis
// positions inside, on and outside the grid.
TEST(GridTable, AReadAlongTheSecondAxisIsLookupAtToTheBit) {
  std::mt19937_64 random(7);
  std::uniform_real_distribution<double> value(0.5, 900.0);
  const std::vector<std::vector<double>> axes[] = {
      {{1, 2, 4, 8, 16, 64}, {16, 128, 1024, 4096, 32768}},
      {{4}, {16, 128, 1024}},
      {{1, 8, 256}, {512}},
      {{3}, {7}},
  };
  for (const auto& shape : axes) {
    GridTable direct(shape), along(shape);
    for (std::size_t i = 0; i < shape[0].size(); ++i) {
      for (std::size_t j = 0; j < shape[1].size(); ++j) {
        const double v = value(random);
        direct.Set({i, j}, v);
        along.Set({i, j}, v);
      }
    }
    std::uniform_real_distribution<double> first(-2, shape[0].back() * 1.5 + 2);
    std::uniform_real_distribution<double> second(-50, shape[1].back() * 1.5 + 50);
    for (int row = 0; row < 40; ++row) {
      // Grid points too: their corner weights are zero.
      const double x = row % 4 == 0 ? shape[0][static_cast<std::size_t>(row / 4) % shape[0].size()]
                                    : first(random);
      const GridTable::Position at = direct.LocateOn(0, x);
      const GridTable::AlongSecond reader(along, at);
      GridTable::Position hint = along.LocateOn(1, shape[1][0]);
      for (int k = 0; k < 60; ++k) {
        const double y =
            k % 5 == 0 ? shape[1][static_cast<std::size_t>(k) % shape[1].size()] : second(random);
        hint = reader.Locate(y, hint);
        const GridTable::Position searched = direct.LocateOn(1, y);
        EXPECT_EQ(hint.lower, searched.lower);
        EXPECT_EQ(hint.weight, searched.weight);
        EXPECT_EQ(reader.LookupAt(hint), direct.LookupAt(at, searched)) << x << ", " << y;
      }
    }
    EXPECT_EQ(along.out_of_grid_lookups(), direct.out_of_grid_lookups());
    EXPECT_GT(direct.out_of_grid_lookups(), 0);
  }
  GridTable one({{1, 2}});
  EXPECT_THROW(GridTable::AlongSecond(one, one.Locate(1)), std::logic_error);
}

// LookupSet reads only inside the grid and only from grid points that have a value; it
// agrees with Lookup there and counts nothing.
TEST(GridTable, LookupSetReadsOnlyWhereEveryWeighedPointHasAValue) {
  GridTable t({{1, 2, 4}, {10, 20}});
  for (std::size_t i = 0; i < 3; ++i) {
    for (std::size_t j = 0; j < 2; ++j) {
      if (i == 2 && j == 1) continue;  // (4, 20) was not measured
      t.Set({i, j}, t.axis(0)[i] + t.axis(1)[j]);
    }
  }
  const auto set = [&](double x, double y) {
    const double point[] = {x, y};
    return t.LookupSet(point);
  };
  EXPECT_EQ(set(1.5, 15), t.Lookup({1.5, 15}));
  EXPECT_DOUBLE_EQ(*set(2, 20), 22);  // on a point: its neighbours' weights are zero
  EXPECT_DOUBLE_EQ(*set(3, 10), 13);  // on an edge beside the hole
  EXPECT_FALSE(set(3, 15));           // the cell weighs (4, 20)
  EXPECT_FALSE(set(0.5, 15));         // outside
  EXPECT_FALSE(set(2, 25));
  EXPECT_EQ(t.out_of_grid_lookups(), 0);
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

// A point with the wrong number of coordinates is a caller's bug: refused in every build.
TEST(GridTable, APointOfTheWrongRankThrows) {
  GridTable two({{16, 32}, {0, 1024}});
  EXPECT_THROW((void)two.Lookup({16}), std::logic_error);
  EXPECT_THROW((void)two.LookupAt(two.Locate(16)), std::logic_error);
  GridTable one({{1, 2}});
  EXPECT_THROW((void)one.Lookup({1, 2}), std::logic_error);
}

}  // namespace
}  // namespace fleetsim
