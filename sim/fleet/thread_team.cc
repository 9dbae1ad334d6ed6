#include "fleet/thread_team.h"

#include <algorithm>
#include <thread>
#include <utility>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#ifndef FLEETSIM_THREADS_WITHOUT_TBB
#include <tbb/task_arena.h>
#include <tbb/task_group.h>
#endif

namespace fleetsim {
namespace {

// A hint to the core that this thread spins (frees the pipeline for the other hyperthread
// and saves power); nothing where the instruction set has none.
void Pause() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#endif
}

// How often a spinning thread offers its processor to another runnable thread.
constexpr std::chrono::microseconds kYieldEvery{50};

}  // namespace

// The ThreadSanitizer build runs the helpers on std::threads: Debian's oneTBB is not
// instrumented, and TSan reports its scheduling (docs/FUZZING.md, "Sanitizers").
struct ThreadTeam::Helpers {
#ifndef FLEETSIM_THREADS_WITHOUT_TBB
  explicit Helpers(int threads) : arena(threads) {}
  tbb::task_arena arena;
  tbb::task_group group;
#else
  explicit Helpers(int) {}
  std::vector<std::thread> threads;
#endif
};

ThreadTeam::ThreadTeam(int threads)
    : size_(std::max(1, threads)), shares_(static_cast<std::size_t>(size_)) {
  if (size_ == 1) return;
  helpers_ = std::make_unique<Helpers>(size_);
#ifndef FLEETSIM_THREADS_WITHOUT_TBB
  // oneTBB's documented way to hand work to an arena's workers and wait for it later.
  helpers_->arena.execute([&] {
    for (std::size_t k = 1; k < shares_.size(); ++k)
      helpers_->group.run([this, k] { HelperLoop(k); });
  });
#else
  for (std::size_t k = 1; k < shares_.size(); ++k)
    helpers_->threads.emplace_back([this, k] { HelperLoop(k); });
#endif
}

ThreadTeam::~ThreadTeam() {
  if (!helpers_) return;
  stop_.store(true);
  generation_.fetch_add(2);  // stays odd: no loop opens
  generation_.notify_all();
#ifndef FLEETSIM_THREADS_WITHOUT_TBB
  // A helper task no worker took yet runs here, sees stop_ and returns at once.
  helpers_->arena.execute([&] { helpers_->group.wait(); });
#else
  for (std::thread& t : helpers_->threads)
    t.join();
#endif
}

void ThreadTeam::Run(const void* body, Call call) {
  body_ = body;
  call_ = call;
  failure_ = nullptr;
  for (Share& share : shares_)
    share.taken.store(0, std::memory_order_relaxed);
  generation_.fetch_add(1);  // odd to even: the loop is open
  generation_.notify_all();
  Work(0);
  // Every index is taken; those helpers still run are inside. Closing first keeps any
  // other helper out, so once none is inside, every index has run.
  generation_.fetch_add(1);  // even to odd: closed to helpers that have not entered
  while (inside_.load() != 0)
    Pause();
  if (failure_) std::rethrow_exception(std::exchange(failure_, nullptr));
}

void ThreadTeam::Work(std::size_t self) {
  for (std::size_t k = 0; k < shares_.size(); ++k) {
    Share& share = shares_[(self + k) % shares_.size()];
    const std::size_t count = share.indices.size();
    for (std::size_t at = share.taken.fetch_add(1, std::memory_order_relaxed); at < count;
         at = share.taken.fetch_add(1, std::memory_order_relaxed)) {
      try {
        call_(body_, share.indices[at], self);
      } catch (...) {
        const std::lock_guard lock(failure_mutex_);
        if (!failure_) failure_ = std::current_exception();
      }
    }
  }
}

void ThreadTeam::HelperLoop(std::size_t self) {
  using Clock = std::chrono::steady_clock;
  uint64_t worked = 0;  // the last generation this helper worked on
  while (!stop_.load()) {
    const uint64_t seen = generation_.load();
    if (seen % 2 == 0 && seen != worked) {
      // Entered only while the loop is still open: the caller then waits for us before it
      // writes the next loop's fields.
      inside_.fetch_add(1);
      if (generation_.load() == seen) Work(self);
      worked = seen;
      inside_.fetch_sub(1);
      continue;
    }
    // Wait for the next generation: spin, then sleep.
    const Clock::time_point start = Clock::now();
    Clock::time_point yielded = start;
    for (uint32_t spins = 1; generation_.load(std::memory_order_relaxed) == seen; ++spins) {
      Pause();
      if (spins % 256 != 0) continue;
      const Clock::time_point now = Clock::now();
      if (now - start > kSpinBeforeSleep) {
        generation_.wait(seen);
        break;
      }
      if (now - yielded > kYieldEvery) {
        std::this_thread::yield();
        yielded = now;
      }
    }
  }
}

}  // namespace fleetsim
