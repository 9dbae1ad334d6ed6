// 64-bit mixing for hashes and random streams: SplitMix64 (Steele, Lea, Flood 2014).
//
//   uint64_t h = SplitMix64(request_id) ^ block_index;   // well-spread, deterministic
#pragma once

#include <cstdint>

namespace fleetsim {

// 2^64 / golden ratio: SplitMix64's increment (a Weyl sequence).
inline constexpr uint64_t kGoldenGamma = 0x9E3779B97F4A7C15ULL;

// SplitMix64's finalizer: a bijection on 64 bits that mixes well.
inline uint64_t Mix64(uint64_t x) {
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// One SplitMix64 step from state `x`: the increment, then the finalizer.
inline uint64_t SplitMix64(uint64_t x) {
  return Mix64(x + kGoldenGamma);
}

}  // namespace fleetsim
