// The simulator's MPI runtime: initialisation and rank identity. It knows bytes and
// ranks, never schedulers or engines.
//
// MPI is initialised with MPI_THREAD_FUNNELED: threads work inside a process, and only
// the thread that called MPI_Init_thread talks MPI. Without `mpirun` the same code runs
// as a single rank (Open MPI's singleton mode).
//
//   int main(int argc, char** argv) {
//     fleetsim::comm::MpiRuntime mpi(&argc, &argv);
//     if (mpi.rank() == 0) ...
//   }
#pragma once

#include <string>
#include <vector>

namespace fleetsim::comm {

class MpiRuntime {
 public:
  MpiRuntime(int* argc, char*** argv);
  ~MpiRuntime();
  MpiRuntime(const MpiRuntime&) = delete;
  MpiRuntime& operator=(const MpiRuntime&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  // The thread support level MPI granted (MPI_THREAD_* constant).
  int thread_level() const { return thread_level_; }

  // Every rank's value, in rank order (an MPI_Allgather of one int).
  std::vector<int> AllGather(int value) const;
  // Every rank's host name, in rank order.
  std::vector<std::string> HostNames() const;
  // A singleton's own Open MPI session directory base (OMPI_MCA_orte_tmpdir_base), removed
  // at the end; "" under a launcher or where the user set it.
  const std::string& session_base() const { return session_base_; }
  // Names session_base() in the environment, so that a fleetsim process this one starts
  // can tell the inherited OMPI_MCA_orte_tmpdir_base from a user's and make its own.
  static constexpr const char* kSessionBaseVariable = "FLEETSIM_MPI_SESSION_BASE";

 private:
  void RemoveSessionBase();

  std::string session_base_;
  int rank_ = 0;
  int size_ = 1;
  int thread_level_ = 0;
};

}  // namespace fleetsim::comm
