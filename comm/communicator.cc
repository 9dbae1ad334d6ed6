#include "comm/communicator.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <sched.h>
#include <string>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace fleetsim::comm {
namespace {

// A hint to the core that this thread spins; nothing where the instruction set has none.
void Pause() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#endif
}

// A waiting thread spins -- on a virtual machine a sleeping one takes long to wake, 0.8 ms
// on the 2-vCPU VM of bench/RESULTS.md (bench/probes/wake_latency.cc), more than a window's
// work in the 1,024-instance benchmark -- offering its processor every kYieldEvery, and
// sleeps after kSpinBeforeSleep (a rank far behind the others). Where the node's threads
// outnumber the processors, a spinning thread would only keep a working one off its
// processor: there it sleeps at once (LocalRanks' `spin`).
constexpr std::chrono::microseconds kYieldEvery{50};
constexpr std::chrono::microseconds kSpinBeforeSleep{20'000};

// Spins while `still()` for up to `spin`, then sleeps on `atom` while it holds `seen`.
template <typename Atomic, typename Value, typename Still>
void SpinThenSleep(const Atomic& atom, Value seen, std::chrono::microseconds spin,
                   const Still& still) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  Clock::time_point yielded = start;
  for (uint32_t spins = 1; still(); ++spins) {
    Pause();
    if (spins % 256 != 0) continue;
    const Clock::time_point now = Clock::now();
    if (now - start > spin) {
      atom.wait(seen);
      seen = atom.load();
      continue;
    }
    if (now - yielded > kYieldEvery) {
      std::this_thread::yield();
      yielded = now;
    }
  }
}

}  // namespace

LocalRanks::LocalRanks(int threads, bool spin)
    : bytes(static_cast<std::size_t>(std::max(1, threads))),
      parts_(static_cast<std::size_t>(std::max(1, threads)), nullptr),
      kinds_(parts_.size(), nullptr),
      spin_(spin ? kSpinBeforeSleep : std::chrono::microseconds{0}) {}

void LocalRanks::Meet(int thread, const char* kind, const void* mine,
                      const std::function<void(std::span<const void* const>)>& lead) {
  if (broken_.load()) throw LocalRanksBroken();
  parts_[static_cast<std::size_t>(thread)] = mine;
  kinds_[static_cast<std::size_t>(thread)] = kind;
  const uint64_t generation = generation_.load(std::memory_order_acquire);
  if (thread != 0) {
    arrived_.fetch_add(1, std::memory_order_acq_rel);
    arrived_.notify_one();
    Wait(generation);
    return;
  }
  const int others = threads() - 1;
  int seen = arrived_.load(std::memory_order_acquire);
  SpinThenSleep(arrived_, seen, spin_, [&] {
    seen = arrived_.load(std::memory_order_acquire);
    return seen < others && !broken_.load(std::memory_order_relaxed);
  });
  if (broken_.load()) throw LocalRanksBroken();
  arrived_.store(0, std::memory_order_relaxed);
  try {
    for (const char* other : kinds_) {
      if (std::strcmp(other, kind) != 0)
        throw std::logic_error(
            std::string("the threads of a process met in different collectives (") + kind + ", " +
            other + ")");
    }
    lead(std::span<const void* const>(parts_));
  } catch (...) {
    Break();
    throw;
  }
  generation_.fetch_add(1, std::memory_order_acq_rel);
  generation_.notify_all();
}

void LocalRanks::Wait(uint64_t generation) {
  SpinThenSleep(generation_, generation, spin_,
                [&] { return generation_.load(std::memory_order_acquire) == generation; });
  // Released (the lead added 1) before or after a break (kBrokenStep): the meeting took
  // place. Broken alone: it never will.
  if ((generation_.load() - generation) % kBrokenStep == 0) throw LocalRanksBroken();
}

void LocalRanks::Break() {
  broken_.store(true);
  // Wake every waiter: each sees a changed value, then the flag.
  arrived_.fetch_add(1 << 20);
  arrived_.notify_all();
  generation_.fetch_add(kBrokenStep);
  generation_.notify_all();
}

int ProcessorsOfThisProcess() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
  return static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
}

bool ThreadsFitProcessors(int threads, MPI_Comm mpi) {
  MPI_Comm node;
  int processes = 1;
  if (MPI_Comm_split_type(mpi, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
    MPI_Comm_size(node, &processes);
    MPI_Comm_free(&node);
  }
  return int64_t{threads} * processes <= ProcessorsOfThisProcess();
}

Comm::Comm(MPI_Comm mpi) : mpi_(mpi) {
  MPI_Comm_rank(mpi, &process_);
  MPI_Comm_size(mpi, &processes_);
  rank_ = process_;
  size_ = processes_;
}

Comm::Comm(MPI_Comm mpi, LocalRanks& local, int thread) : Comm(mpi) {
  local_ = &local;
  thread_ = thread;
  rank_ = process_ * local.threads() + thread;
  size_ = processes_ * local.threads();
}

}  // namespace fleetsim::comm
