// The shared KV block pool of one engine instance (vLLM v1 core/block_pool.py).
//
// Block 0 is the null block: it stands in for skipped positions and is never handed out.
// Free blocks sit in an LRU queue: allocation pops the head and drops whatever prefix
// hash the block had (lazy eviction); freeing appends to the tail; a prefix hit on a
// free block takes it out of the queue. Cached (hashed) blocks count as free until they
// are reused.
//
// Per-block state exists only for blocks that have been handed out at least once. The free
// queue starts as 1..n-1 in id order, frees append to its tail and hits can only take out
// blocks handed out before, so it is always [never-used ids next_fresh_..n-1, in order]
// followed by a linked list of freed blocks: the untouched range is a counter, and memory
// grows with the blocks ever used rather than with the pool size.
// Touch, Free and Cache therefore take only blocks handed out before (asserted).
//
//   BlockPool pool(1253);                  // 1,252 usable
//   std::vector<BlockId> got;
//   pool.Allocate(3, got);                 // ids 1, 2, 3 on a fresh pool
//   pool.Cache(got[0], {hash, group});     // later requests may hit it
//   pool.Free(got);                        // back to the tail, hash kept
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "engine/prefix_index.h"

namespace fleetsim {

class BlockPool {
 public:
  explicit BlockPool(int64_t num_blocks);

  int64_t num_blocks() const { return num_blocks_; }
  int64_t num_free() const { return num_free_; }
  // Fraction of usable blocks held by requests (cached-but-free blocks count as free).
  double Usage() const;
  // Blocks that carry per-block state: those handed out at least once.
  int64_t materialized_blocks() const { return static_cast<int64_t>(state_.size()); }

  // Pops `n` blocks from the head of the free queue into `out`; false (and nothing taken)
  // when fewer are free.
  bool Allocate(int64_t n, std::vector<BlockId>& out);
  // A prefix hit: one more reference, and out of the free queue if it was there.
  void Touch(BlockId block);
  // Drops one reference per block, in the order given; unreferenced blocks go to the tail.
  void Free(const std::vector<BlockId>& blocks);
  void Free(BlockId block);

  bool IsFree(BlockId block) const;
  bool IsCached(BlockId block) const;
  // Registers a computed block under its prefix hash; a block already cached keeps its hash.
  void Cache(BlockId block, CacheKey key);
  // The first block cached under `key`, if any.
  std::optional<BlockId> Lookup(CacheKey key) const;

 private:
  // 32 bytes: over a long run every block of the pool gets one.
  struct BlockState {
    BlockHash hash = 0;  // the cached key, while group >= 0
    int32_t group = -1;  // -1: not cached
    int32_t ref_count = 0;
    BlockId prev = -1;  // free-queue links; -1 when not queued
    BlockId next = -1;
    BlockId next_same = kNullBlock;  // the next block cached under the same key, if any
  };

  bool Used(BlockId block) const { return block != kNullBlock && block < next_fresh_; }
  // State of a block handed out before (the null block has none).
  BlockState& At(BlockId block);
  const BlockState& At(BlockId block) const;
  // The key a cached block is indexed under.
  CacheKey KeyOf(BlockId block) const {
    const BlockState& state = At(block);
    return {state.hash, state.group};
  }
  BlockId Materialize();
  void PushTail(BlockId block);
  void Unlink(BlockId block);
  void Evict(BlockId block);

  int64_t num_blocks_ = 0;
  int64_t num_free_ = 0;
  BlockId next_fresh_ = 1;         // ids next_fresh_..num_blocks_-1 were never handed out
  std::vector<BlockState> state_;  // blocks 1..next_fresh_-1
  BlockId head_ = -1;              // the freed-block list, queued after the fresh range
  BlockId tail_ = -1;
  // Several blocks can carry one key (computed twice before either was hit): the index
  // holds the first cached, and each links to the next, as vLLM's per-hash dict keeps
  // insertion order.
  PrefixIndex index_;
};

}  // namespace fleetsim
