// The ranks of a fleet run: MPI processes, each of one or more threads (`--threads`), every
// thread a rank of its own. Rank r is thread r mod T of process r / T, so one process's
// ranks are consecutive. The collectives of collectives.h take a Comm and treat every
// rank alike; inside a process the threads meet in memory (LocalRanks), and only thread 0,
// the one that called MPI_Init_thread, talks MPI, once per collective for its process.
//
// Why threads are ranks and not helpers of one rank: a rank's serial part -- making and
// routing its share of the requests, the ledger, the exchanges -- is split only when the
// ranks are; helper threads inside one rank sped up its instances alone (bench/RESULTS.md,
// "`--threads 2` on this VM").
//
//   comm::LocalRanks local(2, /*spin=*/true);   // shared by the process's threads
//   std::thread helper([&] { Work(comm::Comm(MPI_COMM_WORLD, local, 1)); });
//   Work(comm::Comm(MPI_COMM_WORLD, local, 0));  // the calling thread: thread 0
//   helper.join();
//
// A Comm made from an MPI_Comm alone is a thread-less rank per process, as before.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <stdexcept>
#include <vector>

#include <mpi.h>

namespace fleetsim::comm {

// Thrown by a meeting of a process's threads once one of them has left for good (an error
// outside the agreed parts): the others stop waiting for it.
struct LocalRanksBroken : std::runtime_error {
  LocalRanksBroken() : std::runtime_error("a thread of this process left the run") {}
};

// Where the threads of one process meet. Meet() returns on every thread once all have
// called it, and thread 0 runs `lead` in between with every thread's `mine`, in thread
// order; what `lead` leaves for the others (in memory they read after Meet returns) stays
// untouched until the next meeting, which no thread passes before all have left this one.
// Every thread names the collective it is in (`kind`, a string literal): threads in
// different ones are a bug, reported instead of reading one collective's part as another's.
class LocalRanks {
 public:
  // With `spin`, a waiting thread spins for a while before it sleeps (communicator.cc
  // says why); without, it sleeps at once -- where threads outnumber processors, spinning
  // would only keep working threads off theirs.
  LocalRanks(int threads, bool spin);
  LocalRanks(const LocalRanks&) = delete;
  LocalRanks& operator=(const LocalRanks&) = delete;

  int threads() const { return static_cast<int>(parts_.size()); }

  void Meet(int thread, const char* kind, const void* mine,
            const std::function<void(std::span<const void* const> parts)>& lead);
  // A thread leaving for good: every meeting, now and later, throws LocalRanksBroken.
  void Break();

  // Scratch the lead leaves for the others (valid until the next meeting).
  std::vector<int64_t> values;
  std::vector<std::vector<std::byte>> bytes;  // by thread

 private:
  void Wait(uint64_t generation);

  // Added to the generation by Break: a waiter tells a release from a break by the step.
  static constexpr uint64_t kBrokenStep = uint64_t{1} << 32;

  std::vector<const void*> parts_;
  std::vector<const char*> kinds_;
  std::atomic<int> arrived_{0};
  std::atomic<uint64_t> generation_{0};
  std::atomic<bool> broken_{false};
  std::chrono::microseconds spin_;  // how long a waiting thread spins before it sleeps
};

// The processors this process may run on: its affinity mask, which mpirun and srun set
// when they bind a rank (Open MPI binds each of two or fewer ranks to one core).
int ProcessorsOfThisProcess();
// Collective over `mpi`: whether `threads` threads in each process of this node, all
// running at once, fit the processors this process may run on (the node's processes are
// taken to share them, as unbound or socket-bound ranks do).
bool ThreadsFitProcessors(int threads, MPI_Comm mpi);

class Comm {
 public:
  // One rank per process (implicit, so an MPI_Comm still names a communicator).
  Comm(MPI_Comm mpi);  // NOLINT(google-explicit-constructor)
  // Thread `thread` of the process's `local` threads.
  Comm(MPI_Comm mpi, LocalRanks& local, int thread);

  int rank() const { return rank_; }
  int size() const { return size_; }
  MPI_Comm mpi() const { return mpi_; }
  int process() const { return process_; }
  int processes() const { return processes_; }
  int thread() const { return thread_; }
  int threads() const { return local_ ? local_->threads() : 1; }
  // The thread that talks MPI and writes the process's share of the output file.
  bool lead() const { return thread_ == 0; }
  LocalRanks* local() const { return local_; }

 private:
  MPI_Comm mpi_;
  LocalRanks* local_ = nullptr;
  int thread_ = 0;
  int process_ = 0;
  int processes_ = 1;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace fleetsim::comm
