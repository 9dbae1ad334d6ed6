// Preloaded (LD_PRELOAD) into one process, makes its N-th C++ allocation throw
// std::bad_alloc, N from FLEETSIM_FAIL_ALLOCATION; every other allocation succeeds. With
// FLEETSIM_COUNT_ALLOCATIONS set it prints, at exit, how many allocations there were.
// tests/app/one_rank_fails.sh loads it into one MPI rank: an exception that rank meets
// alone, as a failed FLEETSIM_CHECK would be, at any point of a run.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <new>

namespace {

std::atomic<long long> allocations{0};

long long FailingAllocation() {
  static const long long n = [] {
    const char* text = std::getenv("FLEETSIM_FAIL_ALLOCATION");
    return text == nullptr ? -1LL : std::atoll(text);
  }();
  return n;
}

struct CountAtExit {
  ~CountAtExit() {
    if (std::getenv("FLEETSIM_COUNT_ALLOCATIONS") != nullptr)
      std::fprintf(stderr, "allocations: %lld\n", allocations.load());
  }
} count_at_exit;

}  // namespace

void* operator new(std::size_t size) {
  if (++allocations == FailingAllocation()) throw std::bad_alloc();
  void* memory = std::malloc(size == 0 ? 1 : size);
  if (memory == nullptr) throw std::bad_alloc();
  return memory;
}
void* operator new[](std::size_t size) {
  return operator new(size);
}
void operator delete(void* memory) noexcept {
  std::free(memory);
}
void operator delete[](void* memory) noexcept {
  std::free(memory);
}
void operator delete(void* memory, std::size_t) noexcept {
  std::free(memory);
}
void operator delete[](void* memory, std::size_t) noexcept {
  std::free(memory);
}
