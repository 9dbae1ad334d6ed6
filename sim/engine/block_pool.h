// The shared KV block pool of one engine instance (vLLM v1 core/block_pool.py).
//
// Block 0 is the null block: it stands in for skipped positions and is never handed out.
// Free blocks sit in a FIFO queue: allocation pops the head and drops whatever prefix
// hash the block had; freeing appends to the tail; a prefix hit on a
// free block takes it out of the queue. Cached (hashed) blocks count as free until they
// are reused.
//
// The queue is an array, not vLLM's doubly linked list: a hit leaves a hole where its
// block was, which pops step over. Popped entries are dropped when they are most of the
// array, without touching a block's state (a queued block keeps its place counted from the
// array's first, which the drop moves on); holes are removed, and the queued blocks told
// their new places, only when they outnumber the queued entries. Popping a run of blocks then reads
// their entries in order and each block's state independently (prefetched ahead), instead of
// chasing a chain of links one cache miss after another; the order is the list's.
//
// Memory follows what is live, not what was ever used: only a block that carries a cached
// prefix, or that a request holds under a name, has state. A free block without a hash is
// anonymous -- nothing can tell it from another one, so the queue keeps only how many of
// them lie between cached blocks (one entry per run) and after the last (a count), and
// its id goes back to a spare list. Popping an anonymous block takes the most recently
// spared id (or a new one when none is spare), so ids stay below the peak number of live
// blocks. A request can also hold blocks anonymously (kAnonymousBlock), when it knows
// their content will never be cached -- without prefix caching, or past the hashes other
// requests can produce (KvCacheManager): those cost a count, not a state, and get a name
// (Name) only if they are to be cached after all. Which id a request gets is not vLLM's,
// but nothing depends on it: the order in which cached blocks are evicted, every hit and
// every count are vLLM's.
//
// Evicting a block whose key names no other block erases the key's index entry
// (PrefixIndex), so the index holds the cached keys only; a key shared by several blocks
// has its entry pointed at the next one.
//
//   BlockPool pool(1253);                  // 1,252 usable
//   std::vector<BlockId> got;
//   pool.Allocate(3, got);                 // ids 1, 2, 3 on a fresh pool
//   pool.Cache(got[0], {hash, group});     // later requests may hit it
//   pool.Free(got);                        // back to the tail, hash kept
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "engine/prefix_index.h"

namespace fleetsim {

class BlockPool {
 public:
  explicit BlockPool(int64_t num_blocks);

  int64_t num_blocks() const { return num_blocks_; }
  // The free blocks an allocation may take: those free less the reserved.
  int64_t num_free() const { return std::max<int64_t>(0, num_free_ - reserved_); }
  // Holds back `n` free blocks (at most those free) from allocations until the next call;
  // 0 lifts it. Usage still counts them free. (Async scheduling: the blocks a step's
  // finishes freed, which vLLM's next schedule did not have, Instance::HideLastFinishes.)
  void Reserve(int64_t n) { reserved_ = std::min(n, num_free_); }
  // Fraction of usable blocks held by requests (cached-but-free blocks count as free).
  double Usage() const;
  // Blocks with state: held by a request or carrying a cached prefix.
  int64_t live_blocks() const { return static_cast<int64_t>(state_.size() - spare_ids_.size()); }
  // Ids with a state slot: the peak of live_blocks() since the pool last held nothing.
  int64_t id_range() const { return static_cast<int64_t>(state_.size()); }
  // Keys with a cached block.
  int64_t cached_keys() const { return cached_keys_; }
  // Entries in the prefix index: one per cached key.
  int64_t index_entries() const { return static_cast<int64_t>(index_.size()); }
  // Bytes of per-block state, spare ids and index.
  int64_t bytes() const;

  // Pops `n` blocks from the head of the free queue into `out`; false (and nothing taken)
  // when fewer are free. `anonymous`: handed out as kAnonymousBlock, without state.
  bool Allocate(int64_t n, std::vector<BlockId>& out, bool anonymous = false);
  // Pops `n` blocks to be held anonymously, counting them only; false when fewer are free.
  bool AllocateAnonymous(int64_t n);
  // A named block for a held one: `block` itself, or a new id with one reference for an
  // anonymous block (about to be cached).
  BlockId Name(BlockId block);
  // A prefix hit: one more reference to a held or cached block, and out of the free queue
  // if it was there.
  void Touch(BlockId block);
  // Drops one reference per block, in the order given; unreferenced blocks go to the tail
  // (an anonymous one just counts there).
  void Free(const std::vector<BlockId>& blocks);
  void Free(BlockId block);
  // A hint that `block` (any id, the null and anonymous ones included) is about to be
  // freed, so that a loop over a request's blocks overlaps their states' cache misses.
  void PrefetchState(BlockId block) const;
  // How many blocks ahead a loop over blocks prefetches a state: its miss then overlaps
  // those of the blocks handled meanwhile.
  static constexpr std::size_t kPrefetchAhead = 8;
  // Frees `n` anonymously held blocks at once.
  void FreeAnonymous(int64_t n) {
    num_free_ += n;
    anonymous_tail_ += n;
    anonymous_pushed_ += n;
  }

  // Anonymous free blocks are numbered in the order they join the queue (from 0, over the
  // pool's life): those numbered below anonymous_popped() have been taken from its head,
  // the rest up to anonymous_pushed() are queued, in that order. (KvCacheManager keeps a
  // conversation's blocks anonymous and remembers their numbers, so that it can cache them
  // later in their places.)
  int64_t anonymous_pushed() const { return anonymous_pushed_; }
  int64_t anonymous_popped() const { return anonymous_popped_; }
  // Caches the queued anonymous blocks numbered [first, first + keys.size()), block
  // first + k under keys[k], each keeping its place in the queue -- as if it had been
  // cached before it was freed. Later anonymous blocks' numbers drop by keys.size().
  void CacheQueuedAnonymous(int64_t first, std::span<const CacheKey> keys);

  bool IsFree(BlockId block) const;
  bool IsCached(BlockId block) const;
  // Registers a held block's computed content under its prefix hash; a block already
  // cached keeps its hash.
  void Cache(BlockId block, CacheKey key);
  // Every block's state, the free queue and the index as they stand (docs/CHECKPOINT.md);
  // Load into a pool of the same size.
  void Save(CheckpointWriter& w) const;
  void Load(CheckpointReader& r);

  // A hint that `key` is about to be looked up or cached (PrefixIndex::Prefetch).
  void Prefetch(CacheKey key) const { index_.Prefetch(key); }
  // The first block cached under `key`, if any. (The index holds cached keys only: the
  // block's state, another cache miss, is not read to check.)
  std::optional<BlockId> Lookup(CacheKey key) const {
    const BlockId first = index_.Find(key);
    if (first == kNullBlock) return std::nullopt;
    return first;
  }

 private:
  // 16 bytes, for live blocks only: four to a cache line, so that a request's run of
  // blocks, freed or evicted together, costs as few lines as its ids allow.
  struct BlockState {
    BlockHash hash = 0;  // the cached key, while group >= 0
    // While queued (cached and free): its place in the queue (queue_[place - queue_base_]);
    // otherwise its references.
    uint32_t refs_or_entry = 0;
    int16_t group = -1;  // -1: not cached
    uint8_t flags = 0;   // kQueued, kBehind, kChained
    uint8_t unused = 0;
  };
  static_assert(sizeof(BlockState) == 16);
  // Flags: cached, free and in queue_; cached under a key whose index entry names an
  // earlier block; the next block cached under its key is in next_same_.
  static constexpr uint8_t kQueued = 1;
  static constexpr uint8_t kBehind = 2;
  static constexpr uint8_t kChained = 4;
  // A link of next_same_, as checkpoints hold it.
  struct Chain {
    BlockId block = kNullBlock;
    BlockId next = kNullBlock;
  };
  static bool Queued(const BlockState& state) { return (state.flags & kQueued) != 0; }
  static uint32_t RefCount(const BlockState& state) {
    return Queued(state) ? 0 : state.refs_or_entry;
  }

  // A free-queue entry: a cached free block's id (> 0), a run of that many anonymous free
  // blocks (as its negative), or a hole a hit left (kHole).
  using QueueEntry = int32_t;
  static constexpr QueueEntry kHole = 0;

  // The state of a live block.
  BlockState& At(BlockId block) {
    FLEETSIM_CHECK(block > kNullBlock && block <= id_range(), "a block id with state");
    return state_[static_cast<std::size_t>(block - 1)];
  }
  const BlockState& At(BlockId block) const {
    FLEETSIM_CHECK(block > kNullBlock && block <= id_range(), "a block id with state");
    return state_[static_cast<std::size_t>(block - 1)];
  }
  // Whether a block id inside the pool has state (held or cached).
  bool Live(BlockId block) const {
    if (block <= kNullBlock || block > id_range()) return false;
    const BlockState& state = state_[static_cast<std::size_t>(block - 1)];
    return state.group >= 0 || RefCount(state) > 0;
  }
  // The next block cached under the same key as `block` (kNullBlock: none), and setting it.
  BlockId NextSame(BlockId block) const;
  void SetNextSame(BlockId block, BlockId next);
  // Whether `block`, found in the index under `key`, is cached under it.
  bool Carries(BlockId block, CacheKey key) const {
    if (block > id_range()) return false;
    const BlockState& state = state_[static_cast<std::size_t>(block - 1)];
    return state.group == key.group && state.hash == key.hash;
  }
  // An id for an anonymous block being handed out, with one reference.
  BlockId TakeAnonymous();
  // A block that lost its last reference and has no hash: its state goes.
  void Release(BlockId block);
  void PushTail(BlockId block);
  // Starts loading the index line that evicting a queued cached block will erase (its
  // state, prefetched kPrefetchAhead before, names the key).
  void PrefetchEntryOf(QueueEntry entry) const;
  // Drops the popped entries when they are most of queue_ (moving the rest down, which
  // changes no place: places count from queue_base_), and the holes when they are most of
  // what is queued (Compact). Amortised: each was made by one push, pop or hit since.
  void CompactIfSparse();
  // Drops the holes, merging the runs that met; every queued block learns its new place.
  void Compact();
  void Evict(BlockId block);
  // Pops `n` (at most num_free_) blocks from the head of the free queue, in queue order:
  // each run of anonymous ones goes to `anonymous(count)`, each cached one, unlinked and
  // evicted, to `cached(block)`.
  template <typename Anonymous, typename Cached>
  void PopFree(int64_t n, Anonymous&& anonymous, Cached&& cached);

  int64_t num_blocks_ = 0;
  int64_t num_free_ = 0;
  int64_t reserved_ = 0;           // not saved: set before each schedule
  std::vector<BlockState> state_;  // ids 1..state_.size()
  // Several blocks can carry one key (computed twice before either was hit), rarely: each
  // links to the next here, as vLLM's per-hash dict keeps insertion order.
  std::unordered_map<BlockId, BlockId> next_same_;
  std::vector<BlockId> spare_ids_;  // ids in that range whose block is anonymous
  // The free queue: entries from queue_head_ on, in order, then anonymous_tail_
  // anonymous blocks; runs, blocks and the tail add up to num_free_.
  std::vector<QueueEntry> queue_;
  std::size_t queue_head_ = 0;
  uint32_t queue_base_ = 0;       // the place of queue_[0] (modulo 2^32, as places are kept)
  std::size_t holes_ = 0;         // kHole entries from queue_head_ on
  int64_t anonymous_tail_ = 0;    // anonymous free blocks queued after the entries
  int64_t anonymous_pushed_ = 0;  // anonymous blocks ever queued (less those cached later)
  int64_t anonymous_popped_ = 0;  // anonymous blocks ever taken from the queue's head
  // The first block cached under each key (next_same_ has the others).
  PrefixIndex index_;
  int64_t cached_keys_ = 0;
};

}  // namespace fleetsim
