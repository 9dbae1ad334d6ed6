#include "engine/request.h"

#include <cstdlib>

#include "core/hash64.h"

namespace fleetsim {

// A field added to Request must be saved below: this size changes with it (a bool may fit
// in padding -- the round-trip test in tests/engine/checkpoint_test.cc catches that one).
static_assert(sizeof(Request) == 320, "Request changed: save the new field in Request::Save/Load");

// The block is `align` bytes longer than the request; the address malloc gave is kept in
// the word just below the aligned one (malloc aligns to at least 16, so there is room).
void* Request::operator new(std::size_t size, std::align_val_t align) {
  const auto alignment = static_cast<std::uintptr_t>(align);
  void* block = std::malloc(size + alignment);
  if (block == nullptr) throw std::bad_alloc();
  const std::uintptr_t aligned =
      (reinterpret_cast<std::uintptr_t>(block) + alignment) & ~(alignment - 1);
  reinterpret_cast<void**>(aligned)[-1] = block;
  return reinterpret_cast<void*>(aligned);
}

void Request::operator delete(void* pointer, std::align_val_t) noexcept {
  if (pointer != nullptr) std::free(static_cast<void**>(pointer)[-1]);
}

void Request::Save(CheckpointWriter& w) const {
  w.I64(prompt_tokens);
  w.I64(max_output_tokens);
  w.I64(num_computed);
  w.I64(num_output);
  w.I64(num_hashed_blocks);
  w.I64(gdn_scan_from);
  w.I32(static_cast<int32_t>(state));
  w.I32(num_preemptions);
  w.I32(num_shared_hashes);
  w.Bool(private_blocks_indexed);
  w.Bool(family_blocks_indexed);
  w.Bool(emitted_last_step);
  w.Bool(remote_decode);
  w.Bool(remote_prefilled);
  w.U64(blocks.size());
  for (std::size_t g = 0; g < blocks.size(); ++g)
    w.Pods(blocks[g]);
  w.I64(id);
  w.I64(slot);
  w.I64(cached_tokens);
  w.Str(name);
  w.Pods(prompt_block_hashes);
  w.I64(shared_hash_limit);
  w.U64(family);
  w.I64(family_hash_start);
  w.I64(family_ends);
}

void Request::Load(CheckpointReader& r, std::size_t groups) {
  prompt_tokens = r.I64();
  max_output_tokens = r.I64();
  num_computed = r.I64();
  num_output = r.I64();
  num_hashed_blocks = r.I64();
  gdn_scan_from = r.I64();
  const int32_t saved_state = r.I32();
  r.Require(saved_state >= 0 && saved_state <= static_cast<int32_t>(RequestState::kRejected),
            "request state");
  state = static_cast<RequestState>(saved_state);
  num_preemptions = r.I32();
  num_shared_hashes = r.I32();
  private_blocks_indexed = r.Bool();
  family_blocks_indexed = r.Bool();
  emitted_last_step = r.Bool();
  remote_decode = r.Bool();
  remote_prefilled = r.Bool();
  const uint64_t saved_groups = r.U64();
  r.Require(saved_groups == 0 || saved_groups == groups, "request's KV-cache group count");
  blocks.clear();
  blocks.resize(saved_groups);
  for (std::size_t g = 0; g < saved_groups; ++g)
    blocks[g] = r.Pods<BlockId>();
  id = r.I64();
  slot = r.I64();
  cached_tokens = r.I64();
  name = r.Str();
  prompt_block_hashes = r.Pods<BlockHash>();
  shared_hash_limit = r.I64();
  r.Require(shared_hash_limit >= -1, "request's shared hash limit");
  family = r.U64();
  family_hash_start = r.I64();
  r.Require(family_hash_start >= -1, "request's conversation hash start");
  family_ends = r.I64();
}

BlockHash Request::BlockHashAt(int64_t index) const {
  if (index < static_cast<int64_t>(prompt_block_hashes.size())) {
    return prompt_block_hashes[static_cast<std::size_t>(index)];
  }
  // Unique per request, so only the request itself (resuming after preemption) hits them.
  return SplitMix64(SplitMix64(static_cast<uint64_t>(id)) ^ static_cast<uint64_t>(index));
}

}  // namespace fleetsim
