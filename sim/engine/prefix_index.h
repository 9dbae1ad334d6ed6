// The prefix cache's index: from a cached hash (with its KV-cache group) to the first block
// cached under it (vLLM's BlockPool.cached_block_hash_to_block, first entry).
//
// Open addressing with linear probing and backward-shift deletion. A slot is 16 bytes and
// holds the whole key (hash and group) beside the block, so a lookup costs one cache miss:
// the slot's line, not the block's state as well. Between an eighth and a half of the slots
// are used (it doubles past a half and halves below an eighth), so it costs 32 to 128 bytes
// per key it holds, 64 slots at least, and nothing when empty: it follows what is cached
// now, not what ever was.
//
//   PrefixIndex index;
//   index.Insert({hash, 0}, 7);               // the key must not be there yet
//   index.Find({hash, 0});                    // 7
//   index.Erase({hash, 0});
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/check.h"
#include "core/checkpoint_io.h"
#include "core/hash64.h"

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

  // Stores `block` under `key`, which must be absent.
  void Insert(CacheKey key, BlockId block) {
    if (2 * (size_ + 1) > slots_.size()) Resize(slots_.empty() ? kMinSlots : 2 * slots_.size());
    std::size_t at = HomeOf(key);
    while (slots_[at].block != kNullBlock)
      at = (at + 1) & mask_;
    slots_[at] = {key.hash, key.group, block};
    ++size_;
  }

  // Points the present `key` at another block.
  void Replace(CacheKey key, BlockId block) {
    const std::size_t at = SlotOf(key);
    FLEETSIM_CHECK(at != kAbsent, "only a cached key is pointed elsewhere");
    slots_[at].block = block;
  }

  // Removes the present `key`.
  void Erase(CacheKey key) {
    std::size_t hole = SlotOf(key);
    FLEETSIM_CHECK(hole != kAbsent, "only a cached key is erased");
    // Shift later members of the probe run back into the hole unless that would move
    // them before their home slot.
    for (std::size_t at = (hole + 1) & mask_; slots_[at].block != kNullBlock;
         at = (at + 1) & mask_) {
      const std::size_t home = HomeOf({slots_[at].hash, slots_[at].group});
      const bool stays = hole <= at ? (hole < home && home <= at) : (hole < home || home <= at);
      if (stays) continue;
      slots_[hole] = slots_[at];
      hole = at;
    }
    slots_[hole] = {};
    --size_;
    if (size_ == 0) {
      std::vector<Slot>().swap(slots_);  // an empty index keeps nothing
      mask_ = 0;
    } else if (slots_.size() > kMinSlots && 8 * size_ < slots_.size()) {
      Resize(slots_.size() / 2);
    }
  }

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
    int32_t group = 0;
    BlockId block = kNullBlock;  // kNullBlock: empty (the null block is never cached)
  };
  static_assert(sizeof(Slot) == 16);
  static constexpr std::size_t kAbsent = ~std::size_t{0};
  static constexpr std::size_t kMinSlots = 64;

  std::size_t HomeOf(CacheKey key) const {
    return static_cast<std::size_t>(Mix64(key.hash ^ Mix64(static_cast<uint64_t>(key.group)))) &
           mask_;
  }

  std::size_t SlotOf(CacheKey key) const {
    if (size_ == 0) return kAbsent;
    for (std::size_t at = HomeOf(key); slots_[at].block != kNullBlock; at = (at + 1) & mask_) {
      if (slots_[at].hash == key.hash && slots_[at].group == key.group) return at;
    }
    return kAbsent;
  }

  // Rehashes into `count` slots (a power of two, more than twice the keys).
  void Resize(std::size_t count) {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(count, Slot{});
    slots_.shrink_to_fit();
    mask_ = count - 1;
    for (const Slot& slot : old) {
      if (slot.block == kNullBlock) continue;
      std::size_t at = HomeOf({slot.hash, slot.group});
      while (slots_[at].block != kNullBlock)
        at = (at + 1) & mask_;
      slots_[at] = slot;
    }
  }

  std::vector<Slot> slots_;
  std::size_t mask_ = 0;
  std::size_t size_ = 0;
};

}  // namespace fleetsim
