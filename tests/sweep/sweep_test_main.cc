// main() of sweep_test: MPI is initialised (one rank) around the tests that run points and
// write HDF5 files -- and only when tests run, not when ctest merely lists them.
#include <memory>

#include <gtest/gtest.h>

#include "comm/mpi_runtime.h"

namespace {

class MpiEnvironment : public ::testing::Environment {
 public:
  // As fleetsim starts MPI (a singleton's own session directory included: ctest runs the
  // discovered tests as separate processes, several at a time).
  void SetUp() override { mpi_ = std::make_unique<fleetsim::comm::MpiRuntime>(nullptr, nullptr); }
  void TearDown() override { mpi_.reset(); }

 private:
  std::unique_ptr<fleetsim::comm::MpiRuntime> mpi_;
};

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new MpiEnvironment);
  return RUN_ALL_TESTS();
}
