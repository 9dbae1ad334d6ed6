#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#ifndef FLEETSIM_THREADS_WITHOUT_TBB
#include <tbb/parallel_for.h>
#endif

namespace fleetsim {

// Runs body(i) for every i in [0, n), spread over the threads tbb::global_control allows
// (RunFleet sets it from --threads); an exception from any body reaches the caller.
//
// The ThreadSanitizer build (-DFLEETSIM_SANITIZE=thread) defines
// FLEETSIM_THREADS_WITHOUT_TBB: Debian's libtbb is not instrumented, so TSan cannot see the
// ordering TBB's scheduler sets up between the caller and its tasks and reports TBB's own
// bookkeeping (docs/FUZZING.md, "Sanitizers"). There the same bodies run on `threads`
// std::threads, whose start and join TSan sees, so what it checks is fleetsim's code
// running concurrently, which is what the tests are for.
template <typename Body>
void ParallelLoop(std::size_t n, [[maybe_unused]] int threads, const Body& body) {
#ifndef FLEETSIM_THREADS_WITHOUT_TBB
  tbb::parallel_for(std::size_t{0}, n, body);
#else
  if (n == 0) return;
  std::atomic<std::size_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  auto work = [&] {
    for (std::size_t i = next.fetch_add(1); i < n; i = next.fetch_add(1)) {
      try {
        body(i);
      } catch (...) {
        const std::lock_guard lock(failure_mutex);
        if (!failure) failure = std::current_exception();
      }
    }
  };
  const std::size_t helpers = std::min(n, static_cast<std::size_t>(threads > 1 ? threads : 1)) - 1;
  std::vector<std::thread> pool;
  pool.reserve(helpers);
  for (std::size_t t = 0; t < helpers; ++t)
    pool.emplace_back(work);
  work();
  for (std::thread& t : pool)
    t.join();
  if (failure) std::rethrow_exception(failure);
#endif
}

}  // namespace fleetsim
