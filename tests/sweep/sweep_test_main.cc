// main() of sweep_test: MPI is initialised (one rank) around the tests that run points and
// write HDF5 files -- and only when tests run, not when ctest merely lists them.
#include <gtest/gtest.h>
#include <mpi.h>

namespace {

class MpiEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  }
  void TearDown() override { MPI_Finalize(); }
};

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new MpiEnvironment);
  return RUN_ALL_TESTS();
}
