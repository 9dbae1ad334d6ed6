// The prefix cache's index: from a cached hash (with its KV-cache group) to the first block
// cached under it (vLLM's BlockPool.cached_block_hash_to_block, first entry).
//
// Open addressing with linear probing, in Robin Hood order: along a probe run, slots sit in
// the order of their homes, so a lookup stops at the first slot that is nearer its home
// than the key's would be, and an erasure shifts back only the slots displaced behind it.
// A slot is 32 bytes and holds up to four keys of one group whose hashes differ only in
// their low 2 bits (a quad): the quad's hash and group, its distance from its home, and a
// block per key. So a lookup costs one cache miss -- the slot's line, not the block's
// state as well -- and moving slots hashes nothing. The four quads of hashes that differ
// only in their low 4 bits have adjacent homes (HomeOf), so a workload's run of 16
// consecutive blocks sits in two lines, at 8 bytes a key; keys without neighbours take a
// slot each.
//
// The pool erases a key's entry when it evicts the key's only block (Erase, which leaves no
// tombstone), so the table holds the cached keys and nothing else, and evicting costs the
// entry's line -- a miss the pool overlaps by prefetching it a few blocks ahead in its
// free queue. (Leaving such entries stale for a later sweep saved that miss, but each
// sweep of a full pool's table read every entry's block at once, milliseconds in one go
// that left the other ranks waiting, and the table twice the size.) A table an insert would
// fill past a half grows fourfold (64 slots at first), so it is between an eighth and a half
// full once grown; Clear drops every entry and the table with them (a pool that empties).
// (Doubling instead keeps tables fuller, yet the day's first 1M requests peaked 2.3 %
// higher with it, likely from the heap its more frequent regrowths left; bench/RESULTS.md.)
//
//   PrefixIndex index;
//   index.Insert({hash, 0}, 7);               // kNullBlock: stored (else the block there)
//   index.Find({hash, 0});                    // 7 (or kNullBlock)
//   index.Replace({hash, 0}, 9);              // the key now names block 9
//   index.Erase({hash, 0});                   // gone
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "core/check.h"
#include "core/checkpoint_io.h"
#include "core/hash64.h"
#include "core/prefetch.h"

namespace fleetsim {

using BlockId = int32_t;
using BlockHash = uint64_t;
inline constexpr BlockId kNullBlock = 0;
// A held block without a name: its content is never cached (see BlockPool).
inline constexpr BlockId kAnonymousBlock = -1;

// A prefix hash as cached for one KV-cache group (vLLM's BlockHashWithGroupId).
struct CacheKey {
  BlockHash hash = 0;
  int32_t group = 0;
  bool operator==(const CacheKey&) const = default;
};

class PrefixIndex {
 public:
  // The block stored under `key`, or kNullBlock.
  BlockId Find(CacheKey key) const {
    const std::size_t at = SlotOf(key);
    return at == kAbsent ? kNullBlock : slots_[at].blocks[Lane(key)];
  }

  // Starts loading the line where a lookup of `key` begins, so that a loop over a run of
  // keys overlaps their cache misses instead of taking them one after another.
  void Prefetch(CacheKey key) const {
    if (!slots_.empty()) PrefetchLine(&slots_[HomeOf(key)]);
  }

  // Stores `block` under `key` unless the key is there already, in one probe: returns the
  // block stored under it before (nothing changed), or kNullBlock when it stored `block`.
  // The key's group fits 16 bits (the pool checks before it caches). A table that would be
  // more than half full of slots first grows fourfold.
  BlockId Insert(CacheKey key, BlockId block) {
    const std::size_t at = SlotOf(key);
    if (at != kAbsent) {  // its quad has a slot
      Slot& slot = slots_[at];
      if (slot.blocks[Lane(key)] != kNullBlock) return slot.blocks[Lane(key)];
      slot.blocks[Lane(key)] = block;
      ++slot.keys;
    } else {
      if (2 * (used_ + 1) > slots_.size()) Grow();
      Slot slot;
      slot.quad = QuadOf(key.hash);
      slot.group = static_cast<int16_t>(key.group);
      slot.keys = 1;
      slot.blocks[Lane(key)] = block;
      Place(slot);
      ++used_;
    }
    ++size_;
    return kNullBlock;
  }

  // Removes `key`'s entry, if any. A slot left with no key goes, closing the gap behind it
  // (backward-shift deletion: the slots after it that are not at their homes move up
  // one), so no tombstone is left.
  void Erase(CacheKey key) {
    std::size_t hole = SlotOf(key);
    if (hole == kAbsent || slots_[hole].blocks[Lane(key)] == kNullBlock) return;
    slots_[hole].blocks[Lane(key)] = kNullBlock;
    --size_;
    if (--slots_[hole].keys > 0) return;
    for (std::size_t at = (hole + 1) & mask_; slots_[at].keys != 0; at = (at + 1) & mask_) {
      const std::size_t distance = DistanceAt(at);
      if (distance == 0) break;
      slots_[hole] = slots_[at];
      slots_[hole].distance = Saturated(distance - 1);
      hole = at;
    }
    slots_[hole] = Slot{};
    --used_;
  }

  // Points the present `key` at another block.
  void Replace(CacheKey key, BlockId block) {
    const std::size_t at = SlotOf(key);
    FLEETSIM_CHECK(at != kAbsent && slots_[at].blocks[Lane(key)] != kNullBlock,
                   "only a cached key is pointed elsewhere");
    slots_[at].blocks[Lane(key)] = block;
  }

  // Drops every entry, and the table.
  void Clear() {
    slots_.clear();
    slots_.shrink_to_fit();
    mask_ = 0;
    size_ = 0;
    used_ = 0;
  }

  // Keys held.
  std::size_t size() const { return size_; }

  // The table as it stands, slot for slot (docs/CHECKPOINT.md).
  void Save(CheckpointWriter& w) const {
    w.Pods(slots_);
    w.U64(size_);
  }
  void Load(CheckpointReader& r) {
    slots_ = r.Pods<Slot>();
    size_ = r.U64();
    used_ = 0;
    std::size_t keys = 0;
    for (const Slot& slot : slots_) {
      std::size_t held = 0;
      for (BlockId block : slot.blocks)
        held += block != kNullBlock ? 1 : 0;
      r.Require(held == slot.keys, "prefix index slot's key count");
      used_ += held > 0 ? 1 : 0;
      keys += held;
    }
    r.Require(
        (slots_.size() & (slots_.size() - 1)) == 0 && 2 * used_ <= slots_.size() && keys == size_,
        "prefix index size");
    mask_ = slots_.empty() ? 0 : slots_.size() - 1;
  }
  // Bytes the table holds.
  std::size_t bytes() const { return slots_.capacity() * sizeof(Slot); }
  // Bytes of one slot (up to four keys).
  static constexpr std::size_t kSlotBytes = 32;

 private:
  // Up to four keys of one group whose hashes differ only in their low 2 bits (their
  // lanes): a run of consecutive blocks named as the generator names them fills a slot,
  // so it costs 8 bytes a key, and a run of 16 fits in two lines.
  struct Slot {
    BlockHash quad = 0;  // the keys' hash without its lane
    int16_t group = 0;
    uint16_t distance = 0;  // from its home; kFar: that far or farther (HomeOf says)
    uint32_t keys = 0;      // 0: empty
    BlockId blocks[4] = {kNullBlock, kNullBlock, kNullBlock, kNullBlock};  // by lane
  };
  static_assert(sizeof(Slot) == kSlotBytes);
  static constexpr std::size_t kAbsent = ~std::size_t{0};
  static constexpr std::size_t kMinSlots = 64;
  static constexpr uint16_t kFar = UINT16_MAX;

  static BlockHash QuadOf(BlockHash hash) { return hash & ~BlockHash{3}; }
  static std::size_t Lane(CacheKey key) { return static_cast<std::size_t>(key.hash & 3); }

  // Keys equal but for their low 4 bits have their four slots side by side from a line's
  // start: a workload whose hashes put a block's index there (workload_gen::BlockHashOf)
  // has a run of 16 consecutive blocks in two adjacent lines, so caching, looking up or
  // evicting a request's run costs a miss per 8 blocks rather than one per block. Other
  // hashes are spread as evenly as before.
  std::size_t HomeOf(BlockHash hash, int group) const {
    const uint64_t run = Mix64((hash >> 4) ^ Mix64(static_cast<uint64_t>(group)));
    return static_cast<std::size_t>((run & ~uint64_t{1}) + ((hash >> 2) & 3)) & mask_;
  }
  std::size_t HomeOf(CacheKey key) const { return HomeOf(key.hash, key.group); }

  static uint16_t Saturated(std::size_t distance) {
    return distance < kFar ? static_cast<uint16_t>(distance) : kFar;
  }

  // How far the slot at `at` sits from its home.
  std::size_t DistanceAt(std::size_t at) const {
    const Slot& slot = slots_[at];
    if (slot.distance != kFar) return slot.distance;
    return (at - HomeOf(slot.quad, slot.group)) & mask_;
  }

  // The slot holding `key`'s quad, if any (the key itself may be absent from it).
  std::size_t SlotOf(CacheKey key) const {
    if (used_ == 0) return kAbsent;
    const BlockHash quad = QuadOf(key.hash);
    std::size_t at = HomeOf(key);
    for (std::size_t distance = 0; slots_[at].keys != 0; ++distance) {
      const Slot& slot = slots_[at];
      if (slot.quad == quad && slot.group == key.group) return at;
      // Robin Hood order: the quad would sit here, before a slot nearer its own home.
      if (DistanceAt(at) < distance) break;
      at = (at + 1) & mask_;
    }
    return kAbsent;
  }

  // Four times the slots (kMinSlots at first), every slot placed again.
  void Grow() {
    const std::vector<Slot> old = std::move(slots_);
    const std::size_t count = old.empty() ? kMinSlots : 4 * old.size();
    slots_.assign(count, Slot{});
    mask_ = count - 1;
    for (const Slot& slot : old) {
      if (slot.keys != 0) Place(slot);
    }
  }

  // Puts `slot` (its quad absent) on its probe run in Robin Hood order: it takes the place
  // of the first slot nearer its home than it is, which moves on the same way, until one
  // reaches an empty slot (there is one: the table is at most half full).
  void Place(Slot slot) {
    std::size_t at = HomeOf(slot.quad, slot.group);
    for (std::size_t distance = 0;; ++distance, at = (at + 1) & mask_) {
      if (slots_[at].keys == 0) {
        slot.distance = Saturated(distance);
        slots_[at] = slot;
        return;
      }
      const std::size_t theirs = DistanceAt(at);
      if (theirs < distance) {
        slot.distance = Saturated(distance);
        std::swap(slot, slots_[at]);
        distance = theirs;
      }
    }
  }

  std::vector<Slot> slots_;
  std::size_t mask_ = 0;
  std::size_t size_ = 0;  // keys
  std::size_t used_ = 0;  // slots holding a key
};

}  // namespace fleetsim
