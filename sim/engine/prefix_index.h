// The prefix cache's index: from a cached hash (with its KV-cache group) to the first block
// cached under it (vLLM's BlockPool.cached_block_hash_to_block, first entry).
//
// Open addressing with linear probing, in Robin Hood order: along a probe run, entries sit
// in the order of their homes, so a lookup stops at the first entry that is nearer its home
// than the key would be, and an erasure shifts back only the entries displaced behind it. A
// slot is 16 bytes and holds the whole key (hash and group) and its distance from its home
// beside the block, so a lookup costs one cache miss -- the slot's line, not the block's
// state as well -- and moving entries hashes nothing. Keys whose hashes differ only in their
// low 4 bits have adjacent homes (HomeOf), so a workload's run of consecutive blocks sits in
// a few adjacent lines.
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
//   index.Insert({hash, 0}, 7);               // the key must not be there yet
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
    return at == kAbsent ? kNullBlock : slots_[at].block;
  }

  // Starts loading the line where a lookup of `key` begins, so that a loop over a run of
  // keys overlaps their cache misses instead of taking them one after another.
  void Prefetch(CacheKey key) const {
    if (!slots_.empty()) PrefetchLine(&slots_[HomeOf(key)]);
  }

  // Stores `block` under `key`, which must be absent and whose group fits 16 bits (the
  // pool checks both before it caches). A table that would be more than half full first
  // grows fourfold.
  void Insert(CacheKey key, BlockId block) {
    if (2 * (size_ + 1) > slots_.size()) Grow();
    Place({key.hash, static_cast<int16_t>(key.group), 0, block});
    ++size_;
  }

  // Removes `key`'s entry, if any, closing the gap behind it (backward-shift deletion: the
  // entries after it that are not at their homes move up one), so no tombstone is left.
  void Erase(CacheKey key) {
    std::size_t hole = SlotOf(key);
    if (hole == kAbsent) return;
    for (std::size_t at = (hole + 1) & mask_; slots_[at].block != kNullBlock;
         at = (at + 1) & mask_) {
      const std::size_t distance = DistanceAt(at);
      if (distance == 0) break;
      slots_[hole] = slots_[at];
      slots_[hole].distance = Saturated(distance - 1);
      hole = at;
    }
    slots_[hole] = Slot{};
    --size_;
  }

  // Points the present `key` at another block.
  void Replace(CacheKey key, BlockId block) {
    const std::size_t at = SlotOf(key);
    FLEETSIM_CHECK(at != kAbsent, "only a cached key is pointed elsewhere");
    slots_[at].block = block;
  }

  // Drops every entry, and the table.
  void Clear() {
    slots_.clear();
    slots_.shrink_to_fit();
    mask_ = 0;
    size_ = 0;
  }

  // Entries held.
  std::size_t size() const { return size_; }

  // The table as it stands, slot for slot (docs/CHECKPOINT.md).
  void Save(CheckpointWriter& w) const {
    w.Pods(slots_);
    w.U64(size_);
  }
  void Load(CheckpointReader& r) {
    slots_ = r.Pods<Slot>();
    size_ = r.U64();
    r.Require((slots_.size() & (slots_.size() - 1)) == 0 && 2 * size_ <= slots_.size(),
              "prefix index size");
    mask_ = slots_.empty() ? 0 : slots_.size() - 1;
  }
  // Bytes the table holds.
  std::size_t bytes() const { return slots_.capacity() * sizeof(Slot); }

 private:
  struct Slot {
    BlockHash hash = 0;
    int16_t group = 0;
    uint16_t distance = 0;       // from its home; kFar: that far or farther (HomeOf says)
    BlockId block = kNullBlock;  // kNullBlock: empty (the null block is never cached)
  };
  static_assert(sizeof(Slot) == 16);
  static constexpr std::size_t kAbsent = ~std::size_t{0};
  static constexpr std::size_t kMinSlots = 64;
  static constexpr uint16_t kFar = UINT16_MAX;

  // Keys equal but for their low 4 bits start in adjacent slots (from a line's start): a
  // workload whose hashes put a block's index there (workload_gen::BlockHashOf) has a run
  // of 16 consecutive blocks in a few adjacent lines, so caching, looking up or evicting a
  // request's run costs a miss per 16 blocks rather than one per block. Other hashes are
  // spread as evenly as before.
  std::size_t HomeOf(CacheKey key) const {
    const uint64_t run = Mix64((key.hash >> 4) ^ Mix64(static_cast<uint64_t>(key.group)));
    return static_cast<std::size_t>((run & ~uint64_t{3}) + (key.hash & 15)) & mask_;
  }

  static uint16_t Saturated(std::size_t distance) {
    return distance < kFar ? static_cast<uint16_t>(distance) : kFar;
  }

  // How far the entry at `at` sits from its home.
  std::size_t DistanceAt(std::size_t at) const {
    const Slot& slot = slots_[at];
    if (slot.distance != kFar) return slot.distance;
    return (at - HomeOf({slot.hash, slot.group})) & mask_;
  }

  std::size_t SlotOf(CacheKey key) const {
    if (size_ == 0) return kAbsent;
    std::size_t at = HomeOf(key);
    for (std::size_t distance = 0; slots_[at].block != kNullBlock; ++distance) {
      const Slot& slot = slots_[at];
      if (slot.hash == key.hash && slot.group == key.group) return at;
      // Robin Hood order: the key would sit here, before an entry nearer its own home.
      if (DistanceAt(at) < distance) break;
      at = (at + 1) & mask_;
    }
    return kAbsent;
  }

  // Four times the slots (kMinSlots at first), every entry placed again.
  void Grow() {
    const std::vector<Slot> old = std::move(slots_);
    const std::size_t count = old.empty() ? kMinSlots : 4 * old.size();
    slots_.assign(count, Slot{});
    mask_ = count - 1;
    for (const Slot& slot : old) {
      if (slot.block != kNullBlock) Place(slot);
    }
  }

  // Puts `slot` (its key absent) on its probe run in Robin Hood order: it takes the place of
  // the first entry nearer its home than it is, which moves on the same way, until one
  // reaches an empty slot (there is one: the table is at most half full).
  void Place(Slot slot) {
    std::size_t at = HomeOf({slot.hash, slot.group});
    for (std::size_t distance = 0;; ++distance, at = (at + 1) & mask_) {
      if (slots_[at].block == kNullBlock) {
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
  std::size_t size_ = 0;
};

}  // namespace fleetsim
