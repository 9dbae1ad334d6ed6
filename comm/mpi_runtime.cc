#include "comm/mpi_runtime.h"

#include <cstdlib>
#include <stdexcept>

#include <mpi.h>

namespace fleetsim::comm {
namespace {

// Whether a launcher started this process (mpirun sets OMPI_COMM_WORLD_SIZE; srun sets
// PMIX_RANK or PMI_RANK); without one, Open MPI runs it as a singleton.
bool StartedByALauncher() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"}) {
    if (std::getenv(name) != nullptr) return true;
  }
  return false;
}

}  // namespace

MpiRuntime::MpiRuntime(int* argc, char*** argv) {
  if (!StartedByALauncher()) {
    // A singleton has no peer to reach, yet Open MPI's default start forks a supporting
    // daemon (orted) and probes the fast transports (UCX, PSM2, OFI): 0.3 s of every
    // single-process command's wall time on this machine (docs/DESIGN.md, Rules). The
    // shared-memory/TCP layer and no daemon serve one process alike. The user's own
    // setting of either wins (setenv does not overwrite).
    setenv("OMPI_MCA_pml", "ob1", 0);
    setenv("OMPI_MCA_ess_singleton_isolated", "1", 0);
  }
  if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &thread_level_) != MPI_SUCCESS) {
    throw std::runtime_error("MPI_Init_thread failed");
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

MpiRuntime::~MpiRuntime() {
  MPI_Finalize();
}

std::vector<int> MpiRuntime::AllGather(int value) const {
  std::vector<int> all(static_cast<std::size_t>(size_));
  MPI_Allgather(&value, 1, MPI_INT, all.data(), 1, MPI_INT, MPI_COMM_WORLD);
  return all;
}

std::vector<std::string> MpiRuntime::HostNames() const {
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  MPI_Get_processor_name(name, &length);
  std::vector<char> all(static_cast<std::size_t>(size_) * MPI_MAX_PROCESSOR_NAME);
  MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all.data(), MPI_MAX_PROCESSOR_NAME,
                MPI_CHAR, MPI_COMM_WORLD);
  std::vector<std::string> hosts;
  for (int r = 0; r < size_; ++r) {
    hosts.emplace_back(&all[static_cast<std::size_t>(r) * MPI_MAX_PROCESSOR_NAME]);
  }
  return hosts;
}

}  // namespace fleetsim::comm
