// The threads of one rank (--threads), kept awake for the whole fleet run: a parallel loop
// on the team starts at once instead of waking sleeping workers.
//
// Why not a tbb::parallel_for per window: TBB's workers go to sleep when a loop ends, and
// on a virtual machine a sleeping thread takes long to wake -- 0.8 ms on the 2-vCPU VM of
// bench/RESULTS.md (bench/probes/wake_latency.cc), more than the instances' whole work in
// a window of the 1,024-instance benchmark (about 0.7 ms). The team's helpers still run on
// oneTBB's workers (a task each, in an arena of `threads`), but between loops they spin on
// a generation counter -- yielding the processor as they do, so a rank sharing its cores
// loses little -- and only sleep after kSpinBeforeSleep without work.
//
// For(n, owner, body) runs body(i, thread) for every i in [0, n), `thread` in [0, size())
// being the thread that runs it (for per-thread scratch). Index i belongs to thread
// owner(i) % size(): each thread runs its own indices first, then helps the others with
// theirs. An owner that names the same thread for the same entity every time (an
// instance's id) keeps that entity's memory in one core's caches, which matters where
// moving a written line between cores is dear (InstanceShard, docs/DESIGN.md "Threads
// inside a rank"). The caller is thread 0, and runs whatever no helper took, so a team of
// one (or a helper that has not started yet) runs everything on the caller. The order
// indices run in is not fixed, so a body must touch only its own index's state (the
// results then do not depend on the thread count). An exception from any body reaches the
// caller, after every index has run (on a team of one, at once).
//
//   ThreadTeam team(2);
//   team.For(instances.size(), [&](std::size_t i) { return instances[i].id; },
//            [&](std::size_t i, std::size_t) { instances[i].RunUntil(t); });
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <vector>

namespace fleetsim {

class ThreadTeam {
 public:
  // `threads` threads in all, the caller's included (at least one).
  explicit ThreadTeam(int threads);
  ~ThreadTeam();
  ThreadTeam(const ThreadTeam&) = delete;
  ThreadTeam& operator=(const ThreadTeam&) = delete;

  int size() const { return size_; }

  template <typename Owner, typename Body>
  void For(std::size_t n, const Owner& owner, const Body& body) {
    if (n == 0) return;
    if (size_ <= 1 || n == 1) {
      for (std::size_t i = 0; i < n; ++i)
        body(i, std::size_t{0});
      return;
    }
    for (Share& share : shares_)
      share.indices.clear();
    for (std::size_t i = 0; i < n; ++i)
      shares_[static_cast<std::size_t>(owner(i)) % shares_.size()].indices.push_back(i);
    Run(&body, [](const void* b, std::size_t i, std::size_t thread) {
      (*static_cast<const Body*>(b))(i, thread);
    });
  }

  // How long a helper spins without work before it sleeps: longer than the serial part
  // between two loops of a busy run, so that it stays awake through one.
  static constexpr std::chrono::milliseconds kSpinBeforeSleep{20};

 private:
  using Call = void (*)(const void* body, std::size_t index, std::size_t thread);
  void Run(const void* body, Call call);
  // Runs thread `self`'s indices of the open loop, then what is left of the others'.
  void Work(std::size_t self);
  void HelperLoop(std::size_t self);

  // One thread's indices of the open loop, and how many of them were taken (by it, or
  // by a thread helping), on a cache line of its own.
  struct alignas(64) Share {
    std::vector<std::size_t> indices;
    std::atomic<std::size_t> taken{0};
  };

  int size_;
  // The open loop (written by the caller while the generation is odd: no loop open).
  std::vector<Share> shares_;  // by thread
  const void* body_ = nullptr;
  Call call_ = nullptr;
  // Even while a loop is open, odd between loops; helpers work on a generation they have
  // not worked on yet, and count themselves `inside_` while they may touch its fields.
  std::atomic<uint64_t> generation_{1};
  std::atomic<int> inside_{0};
  std::atomic<bool> stop_{false};
  std::mutex failure_mutex_;
  std::exception_ptr failure_;
  struct Helpers;  // the threads (oneTBB's, or std::threads in the TSan build)
  std::unique_ptr<Helpers> helpers_;
};

}  // namespace fleetsim
