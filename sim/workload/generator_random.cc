#include "workload/generator_random.h"

#include "core/hash64.h"

namespace fleetsim::workload_gen {

uint64_t HashCombine(uint64_t h, uint64_t value) {
  return Mix64(h ^ Mix64(value + kGoldenGamma));
}

uint64_t StreamSeed(uint64_t seed, StreamPurpose purpose, uint64_t a, uint64_t b) {
  uint64_t h = Mix64(seed + kGoldenGamma);
  h = HashCombine(h, static_cast<uint64_t>(purpose));
  h = HashCombine(h, a);
  return HashCombine(h, b);
}

}  // namespace fleetsim::workload_gen
