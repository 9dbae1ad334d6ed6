#include "comm/mpi_runtime.h"

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <system_error>
#include <unistd.h>

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

// Whether mpirun started every rank of the job on this node (it sets the job's and this
// node's rank counts in the environment of each process it starts).
bool MpirunPutEveryRankHere() {
  const char* world = std::getenv("OMPI_COMM_WORLD_SIZE");
  const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  return world != nullptr && local != nullptr && std::strcmp(world, local) == 0;
}

// The session directory base this singleton made its own (empty: none), removed once MPI
// is finalised.
std::string g_own_session_base;

// Isolated singletons all keep their session directory at one path below the temp
// directory (ompi.<host>.<uid>/jf.0/1/0: strace shows every one making it), and each
// removes it in MPI_Finalize. One starting just then could find the path gone under it
// (`mkdir .../jf.0: No such file or directory` at orte_init: two suite tests at once on
// 2026-12-05, while another fleetsim singleton ended). So each keeps its session below a
// base of its own, <temp dir>/fleetsim-mpi-<pid> (orte_tmpdir_base, Open MPI 4), unless
// the user chose a base; one inherited from another fleetsim (a process that started this
// one) is not the user's and is replaced.
void UseOwnSessionBase() {
  const std::string prefix = "fleetsim-mpi-";
  std::error_code error;
  const std::filesystem::path temp = std::filesystem::temp_directory_path(error);
  if (error) return;  // Open MPI reports its own trouble with the temp directory
  const std::string mine = (temp / (prefix + std::to_string(::getpid()))).string();
  const char* set = std::getenv("OMPI_MCA_orte_tmpdir_base");
  if (set != nullptr && std::filesystem::path(set).filename().string().rfind(prefix, 0) != 0)
    return;  // the user's
  setenv("OMPI_MCA_orte_tmpdir_base", mine.c_str(), 1);
  g_own_session_base = mine;
}

}  // namespace

void PrepareMpiEnvironment() {
  // Open MPI's default start probes the fast inter-node transports (UCX, PSM2, OFI) in
  // every process; ranks that all share one node reach each other through shared memory
  // alone, which the ob1 layer (with its shared-memory transport) carries. The user's own
  // setting wins (setenv does not overwrite). docs/DESIGN.md, Rules, has the figures.
  if (!StartedByALauncher()) {
    // A singleton has no peer at all, yet Open MPI also forks a supporting daemon (orted).
    setenv("OMPI_MCA_pml", "ob1", 0);
    setenv("OMPI_MCA_ess_singleton_isolated", "1", 0);
    // Isolated singletons share one session directory (jf.0/1 under the temp dir), which
    // the first to finish removes; the shared-file-pointer "sm" component that every
    // MPI_File_open sets up keeps its file there, so a second fleetsim writing its HDF5
    // file at that moment failed to open it (seen once in the suite, two runs at once;
    // open-mpi/ompi#10971, #9656 gives this workaround). Nothing here uses shared file
    // pointers.
    setenv("OMPI_MCA_sharedfp", "^sm", 0);
    // A singleton with a daemon (the user's ess_singleton_isolated=0) has the daemon's
    // session, of its own already, which the daemon removes only after this process ends.
    if (std::strcmp(std::getenv("OMPI_MCA_ess_singleton_isolated"), "1") == 0) UseOwnSessionBase();
  } else if (MpirunPutEveryRankHere()) {
    setenv("OMPI_MCA_pml", "ob1", 0);
  }
}

void CleanUpMpiEnvironment() {
  if (g_own_session_base.empty()) return;
  // Empty once Open MPI has removed its session (a non-empty one is left as it is).
  std::error_code ignored;
  std::filesystem::remove(g_own_session_base, ignored);
  g_own_session_base.clear();
}

MpiRuntime::MpiRuntime(int* argc, char*** argv) {
  PrepareMpiEnvironment();
  if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &thread_level_) != MPI_SUCCESS) {
    throw std::runtime_error("MPI_Init_thread failed");
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

MpiRuntime::~MpiRuntime() {
  MPI_Finalize();
  CleanUpMpiEnvironment();
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
