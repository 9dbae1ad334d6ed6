// main() of output_hdf5_test. It runs under `mpirun -np N` and without mpirun (one rank):
// every rank runs every test, only rank 0 prints, and every rank's result decides the
// exit code -- a failure seen only on rank 3 still fails the test.
#include <cstdio>

#include <gtest/gtest.h>
#include <mpi.h>

#include "output/test_world.h"

namespace {

// On ranks other than 0 the full report is silenced, but a failure there must still say
// what failed, or a red run on rank 3 would be a mystery.
class FailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit FailurePrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (!result.failed()) return;
    std::fprintf(stderr, "[rank %d] %s:%d: %s\n", rank_,
                 result.file_name() ? result.file_name() : "?", result.line_number(),
                 result.summary());
  }

 private:
  int rank_;
};

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  ::testing::InitGoogleTest(&argc, argv);
  namespace world = fleetsim::output::testing;
  world::CreateScratchDirectory();
  if (world::WorldRank() != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new FailurePrinter(world::WorldRank()));
  }
  const int failed = RUN_ALL_TESTS();
  int any_failed = 0;
  MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  world::RemoveScratchDirectory();
  if (world::WorldRank() == 0) {
    std::printf("output_hdf5_test on %d ranks: %s\n", world::WorldSize(),
                any_failed ? "some failed" : "all passed");
  }
  MPI_Finalize();
  return any_failed;
}
