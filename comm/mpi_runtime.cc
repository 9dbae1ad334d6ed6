#include "comm/mpi_runtime.h"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string_view>
#include <sys/stat.h>
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

constexpr std::string_view kSessionBasePrefix = "fleetsim-mpi-";

// Removes the session directories of this user's singletons that died without reaching
// MPI_Finalize (SIGKILL, a crash): each is named after its process, and one whose process
// is gone is removed. A live process, or another user's, keeps its own.
void RemoveOrphanedSessionBases(const std::filesystem::path& temp) {
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(temp, error)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(kSessionBasePrefix, 0) != 0) continue;
    const char* digits = name.c_str() + kSessionBasePrefix.size();
    char* end = nullptr;
    const long pid = std::strtol(digits, &end, 10);
    if (end == digits || *end != '-' || pid <= 0) continue;
    if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;
    struct stat info {};
    if (::lstat(entry.path().c_str(), &info) != 0 || !S_ISDIR(info.st_mode) ||
        info.st_uid != ::getuid())
      continue;
    std::error_code ignored;
    std::filesystem::remove_all(entry.path(), ignored);
  }
}

// A new, empty directory under the system's temporary one (TMPDIR, else /tmp) for a
// singleton's Open MPI session tree, named after this process; "" when none can be made
// (Open MPI's default then).
std::string MakeSessionBase() {
  std::error_code error;
  const std::filesystem::path temp = std::filesystem::temp_directory_path(error);
  if (error) return "";
  RemoveOrphanedSessionBases(temp);
  std::string name =
      (temp / (std::string(kSessionBasePrefix) + std::to_string(::getpid()) + "-XXXXXX")).string();
  if (::mkdtemp(name.data()) == nullptr) return "";
  return name;
}

}  // namespace

MpiRuntime::MpiRuntime(int* argc, char*** argv) {
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
    // Their start races the same way: singletons starting while another removes jf.0 fail
    // in orte_init ("A call to mkdir was unable to create the desired directory: .../jf.0,
    // File exists"; 7 of 480 fleetsim singletons started a dozen at a time here,
    // open-mpi/ompi#8510). So each gets a session directory tree of its own, which it
    // removes at the end, unless the user chose where the tree goes. A fleetsim process
    // that another started (a test's, say) inherits its parent's setting, marked as ours
    // by kSessionBaseVariable: that is no user's choice, and sharing it races again.
    const char* chosen = std::getenv("OMPI_MCA_orte_tmpdir_base");
    const char* inherited = std::getenv(kSessionBaseVariable);
    if (chosen == nullptr || (inherited != nullptr && std::strcmp(chosen, inherited) == 0))
      session_base_ = MakeSessionBase();
    if (!session_base_.empty()) {
      setenv("OMPI_MCA_orte_tmpdir_base", session_base_.c_str(), 1);
      setenv(kSessionBaseVariable, session_base_.c_str(), 1);
    }
  } else if (MpirunPutEveryRankHere()) {
    setenv("OMPI_MCA_pml", "ob1", 0);
  }
  if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &thread_level_) != MPI_SUCCESS) {
    RemoveSessionBase();
    throw std::runtime_error("MPI_Init_thread failed");
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

MpiRuntime::~MpiRuntime() {
  MPI_Finalize();
  RemoveSessionBase();
}

void MpiRuntime::RemoveSessionBase() {
  if (session_base_.empty()) return;
  std::error_code ignored;  // a tree Open MPI left behind is not worth failing over
  std::filesystem::remove_all(session_base_, ignored);
  // Nothing started later inherits a directory that is gone.
  unsetenv("OMPI_MCA_orte_tmpdir_base");
  unsetenv(kSessionBaseVariable);
  session_base_.clear();
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
