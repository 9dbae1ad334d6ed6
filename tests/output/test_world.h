// What every test in output_hdf5_test shares: the MPI world and one scratch directory
// that all ranks agree on (rank 0 names and creates it, then broadcasts the name), set up
// by mpi_test_main.cc before the tests run and removed after.
//
//   const std::filesystem::path file = ScratchDirectory() / "requests.h5";
//   if (WorldRank() == 0) ...
#pragma once

#include <filesystem>

namespace fleetsim::output::testing {

int WorldRank();
int WorldSize();
const std::filesystem::path& ScratchDirectory();

// Called once from main(), collectively.
void CreateScratchDirectory();
void RemoveScratchDirectory();

}  // namespace fleetsim::output::testing
