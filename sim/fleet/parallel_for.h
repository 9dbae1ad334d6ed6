// tbb::parallel_for over [0, n), told to ThreadSanitizer. TBB hands tasks to its worker
// threads, and learns that they finished, through atomics inside libtbb, which a TSan
// build does not instrument (Debian's libtbb): TSan would see no order between what the
// calling thread wrote before the loop and a task's reads, nor between a task's writes
// and the caller's reads after it, and report races that cannot happen. Under TSan the
// loop says both orders explicitly (a release before it and an acquire in each task; a
// release at each task's end and an acquire after it); otherwise it is tbb::parallel_for.
//
//   ParallelFor(instances.size(), [&](std::size_t i) { instances[i].RunUntil(t); });
#pragma once

#include <cstddef>

#include <tbb/parallel_for.h>

#if defined(__SANITIZE_THREAD__)
#define FLEETSIM_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define FLEETSIM_TSAN 1
#endif
#endif

#ifdef FLEETSIM_TSAN
#include <sanitizer/tsan_interface.h>
#endif

namespace fleetsim {

template <typename Body>
void ParallelFor(std::size_t n, const Body& body) {
#ifdef FLEETSIM_TSAN
  char fork = 0, join = 0;  // only their addresses are used: one per loop
  __tsan_release(&fork);
  tbb::parallel_for(std::size_t{0}, n, [&](std::size_t i) {
    __tsan_acquire(&fork);
    body(i);
    __tsan_release(&join);
  });
  __tsan_acquire(&join);
#else
  tbb::parallel_for(std::size_t{0}, n, body);
#endif
}

}  // namespace fleetsim
