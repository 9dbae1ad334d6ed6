#include "output/test_world.h"

#include <random>
#include <string>
#include <unistd.h>

#include <mpi.h>

namespace fleetsim::output::testing {
namespace {

std::filesystem::path g_scratch;

}  // namespace

int WorldRank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

int WorldSize() {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

const std::filesystem::path& ScratchDirectory() {
  return g_scratch;
}

void CreateScratchDirectory() {
  std::string name;
  if (WorldRank() == 0) {
    // pid plus a random number: concurrent ctest runs (-j) must not share a directory.
    std::random_device random;
    const auto path =
        std::filesystem::temp_directory_path() /
        ("fleetsim_output_test_" + std::to_string(getpid()) + "_" + std::to_string(random()));
    std::filesystem::create_directories(path);
    name = path.string();
  }
  unsigned long long length = name.size();
  MPI_Bcast(&length, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
  name.resize(length);
  MPI_Bcast(name.data(), static_cast<int>(length), MPI_CHAR, 0, MPI_COMM_WORLD);
  g_scratch = name;
}

void RemoveScratchDirectory() {
  MPI_Barrier(MPI_COMM_WORLD);  // every rank is done with the files
  std::error_code ignored;
  if (WorldRank() == 0) std::filesystem::remove_all(g_scratch, ignored);
}

}  // namespace fleetsim::output::testing
