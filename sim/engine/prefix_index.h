// The prefix cache's index: from a cached hash (with its KV-cache group) to the first block
// cached under it (vLLM's BlockPool.cached_block_hash_to_block, first entry).
//
// Open addressing with linear probing and backward-shift deletion. A slot is 8 bytes: the
// low 32 bits of the key's mixed hash (its home position, and a cheap filter) and the
// block; the full key lives in the block pool's per-block state, which the caller reads
// through `key_of`. At most half the slots are used, so a pool of n blocks costs at most
// 16n bytes here -- against ~90 bytes per cached block for a std::unordered_map of nodes,
// which made the index the largest and most cache-hostile part of a long fleet run.
//
//   PrefixIndex index;
//   auto key_of = [&](BlockId b) { return keys[b]; };
//   index.Insert({hash, 0}, 7);               // the key must not be there yet
//   index.Find({hash, 0}, key_of);            // 7
//   index.Erase({hash, 0}, key_of);
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/hash64.h"

namespace fleetsim {

using BlockId = int32_t;
using BlockHash = uint64_t;
inline constexpr BlockId kNullBlock = 0;

// A prefix hash as cached for one KV-cache group (vLLM's BlockHashWithGroupId).
struct CacheKey {
  BlockHash hash = 0;
  int32_t group = 0;
  bool operator==(const CacheKey&) const = default;
};

class PrefixIndex {
 public:
  // The block stored under `key`, or kNullBlock.
  template <typename KeyOf>
  BlockId Find(CacheKey key, const KeyOf& key_of) const {
    const std::size_t at = SlotOf(key, key_of);
    return at == kAbsent ? kNullBlock : slots_[at].block;
  }

  // Stores `block` under `key`, which must be absent.
  void Insert(CacheKey key, BlockId block) {
    if (2 * (size_ + 1) > slots_.size()) Grow();
    const uint32_t hash = HashOf(key);
    std::size_t at = hash & mask_;
    while (slots_[at].block != kNullBlock)
      at = (at + 1) & mask_;
    slots_[at] = {hash, block};
    ++size_;
  }

  // Points the present `key` at another block.
  template <typename KeyOf>
  void Replace(CacheKey key, BlockId block, const KeyOf& key_of) {
    slots_[SlotOf(key, key_of)].block = block;
  }

  // Removes the present `key`.
  template <typename KeyOf>
  void Erase(CacheKey key, const KeyOf& key_of) {
    std::size_t hole = SlotOf(key, key_of);
    // Shift later members of the probe run back into the hole unless that would move
    // them before their home slot.
    for (std::size_t at = (hole + 1) & mask_; slots_[at].block != kNullBlock;
         at = (at + 1) & mask_) {
      const std::size_t home = slots_[at].hash & mask_;
      const bool stays = hole <= at ? (hole < home && home <= at) : (hole < home || home <= at);
      if (stays) continue;
      slots_[hole] = slots_[at];
      hole = at;
    }
    slots_[hole] = {};
    --size_;
  }

  std::size_t size() const { return size_; }

 private:
  struct Slot {
    uint32_t hash = 0;
    BlockId block = kNullBlock;  // kNullBlock: empty (the null block is never cached)
  };
  static constexpr std::size_t kAbsent = ~std::size_t{0};

  static uint32_t HashOf(CacheKey key) {
    return static_cast<uint32_t>(Mix64(key.hash ^ Mix64(static_cast<uint64_t>(key.group))));
  }

  template <typename KeyOf>
  std::size_t SlotOf(CacheKey key, const KeyOf& key_of) const {
    if (slots_.empty()) return kAbsent;
    const uint32_t hash = HashOf(key);
    for (std::size_t at = hash & mask_; slots_[at].block != kNullBlock; at = (at + 1) & mask_) {
      if (slots_[at].hash == hash && key_of(slots_[at].block) == key) return at;
    }
    return kAbsent;
  }

  // Doubles the table; the home slot comes from the stored hash, so no key is read.
  void Grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.empty() ? 64 : 2 * old.size(), Slot{});
    mask_ = slots_.size() - 1;
    for (const Slot& slot : old) {
      if (slot.block == kNullBlock) continue;
      std::size_t at = slot.hash & mask_;
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
