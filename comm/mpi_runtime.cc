#include "comm/mpi_runtime.h"

#include <stdexcept>

#include <mpi.h>

namespace fleetsim::comm {

MpiRuntime::MpiRuntime(int* argc, char*** argv) {
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
