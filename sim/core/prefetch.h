// A hint to start loading the cache line at an address, for loops over random reads whose
// addresses are known a few iterations ahead (the prefix index's slots and block states).
//
//   for (i ...) { PrefetchLine(&table[key_of(i + 8)]); ... table[key_of(i)] ... }
#pragma once

namespace fleetsim {

inline void PrefetchLine(const void* address) {
#if defined(__x86_64__)
  // GCC 12 deletes __builtin_prefetch in a caller it finds free of side effects (and
  // then the calls to that caller); an asm statement it keeps.
  asm volatile("prefetcht0 %0" : : "m"(*static_cast<const char*>(address)));
#else
  __builtin_prefetch(address);
#endif
}

}  // namespace fleetsim
