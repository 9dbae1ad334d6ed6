// RowRangeOf over the MPI world: each rank's offset is the rows of the ranks before it.
#include "output/row_range.h"

#include <cstdint>
#include <stdexcept>

#include <gtest/gtest.h>
#include <mpi.h>

#include "output/test_world.h"

namespace fleetsim::output {
namespace {

using testing::WorldRank;
using testing::WorldSize;

int64_t CountOf(int rank) {
  return rank == 1 ? 0 : 3 * rank + 1;
}  // 1, 0, 7, 10

TEST(RowRange, OffsetIsTheRowsOfLowerRanks) {
  const RowRange range = RowRangeOf(CountOf(WorldRank()), MPI_COMM_WORLD);
  int64_t before = 0;
  int64_t total = 0;
  for (int rank = 0; rank < WorldSize(); ++rank) {
    if (rank < WorldRank()) before += CountOf(rank);
    total += CountOf(rank);
  }
  EXPECT_EQ(range.offset, before);
  EXPECT_EQ(range.total, total);
}

TEST(RowRange, ANegativeCountOnOneRankThrowsOnEvery) {
  const int64_t count = WorldRank() == WorldSize() - 1 ? -1 : 5;
  EXPECT_THROW(RowRangeOf(count, MPI_COMM_WORLD), std::invalid_argument);
}

}  // namespace
}  // namespace fleetsim::output
