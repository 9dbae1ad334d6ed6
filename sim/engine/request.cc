#include "engine/request.h"

#include "core/hash64.h"

namespace fleetsim {
BlockHash Request::BlockHashAt(int64_t index) const {
  if (index < static_cast<int64_t>(prompt_block_hashes.size())) {
    return prompt_block_hashes[static_cast<std::size_t>(index)];
  }
  // Unique per request, so only the request itself (resuming after preemption) hits them.
  return SplitMix64(SplitMix64(static_cast<uint64_t>(id)) ^ static_cast<uint64_t>(index));
}

}  // namespace fleetsim
