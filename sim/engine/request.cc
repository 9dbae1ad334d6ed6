#include "engine/request.h"

namespace fleetsim {
namespace {

// SplitMix64: a well-mixed 64-bit hash of (request, block index) for blocks the workload
// gave no hash for. Unique per request, so they are hit only by the request itself (a
// preempted request resuming).
BlockHash Mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

}  // namespace

BlockHash Request::BlockHashAt(int64_t index) const {
  if (index < static_cast<int64_t>(prompt_block_hashes.size())) {
    return prompt_block_hashes[static_cast<std::size_t>(index)];
  }
  return Mix(Mix(static_cast<uint64_t>(id)) ^ static_cast<uint64_t>(index));
}

}  // namespace fleetsim
