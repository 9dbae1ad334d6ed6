// A map from a non-zero 64-bit key to a value, for the KV cache manager's conversations:
// one lookup per turn that arrives or finishes, so it costs one cache line a lookup where
// a node-based map costs two or three. Open addressing with linear probing; an erasure
// shifts back the entries displaced behind it, so no tombstones are left. A table more
// than half full doubles; ShrinkIfSparse gives room back. No room is taken until the first
// insert.
//
//   FamilyTable<Family> table;
//   table.Insert(id).holder = request;   // default-made when absent
//   if (Family* f = table.Find(id)) ...
//   table.Erase(id);
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "core/check.h"
#include "core/hash64.h"

namespace fleetsim {

template <typename Value>
class FamilyTable {
 public:
  Value* Find(uint64_t key) {
    const std::size_t at = SlotOf(key);
    return at == kAbsent ? nullptr : &slots_[at].value;
  }
  const Value* Find(uint64_t key) const {
    const std::size_t at = SlotOf(key);
    return at == kAbsent ? nullptr : &slots_[at].value;
  }

  // The value under `key`, made (default) when absent. Moves the others' values.
  Value& Insert(uint64_t key) {
    FLEETSIM_CHECK(key != 0, "a family table key is not 0");
    if (const std::size_t at = SlotOf(key); at != kAbsent) return slots_[at].value;
    if (2 * (size_ + 1) > slots_.size()) Grow();
    std::size_t at = HomeOf(key);
    while (slots_[at].key != 0)
      at = (at + 1) & mask_;
    slots_[at].key = key;
    ++size_;
    return slots_[at].value;
  }

  // Removes `key`, if there.
  void Erase(uint64_t key) {
    std::size_t hole = SlotOf(key);
    if (hole == kAbsent) return;
    // Backward shift: an entry after the hole moves into it unless its home lies
    // cyclically in (hole, its place], where the hole does not lie on its probe run.
    for (std::size_t at = (hole + 1) & mask_; slots_[at].key != 0; at = (at + 1) & mask_) {
      const std::size_t home = HomeOf(slots_[at].key);
      if (((at - home) & mask_) < ((at - hole) & mask_)) continue;
      slots_[hole] = std::move(slots_[at]);
      hole = at;
    }
    slots_[hole] = Slot{};
    --size_;
  }

  // Gives back room when at most an eighth of the slots are taken (all of it when none
  // is), leaving the table a quarter full.
  void ShrinkIfSparse() {
    if (slots_.size() <= kMinSlots || 8 * size_ > slots_.size()) return;
    if (size_ == 0) {
      slots_ = std::vector<Slot>();  // moved from: its room goes too
      mask_ = 0;
      return;
    }
    std::size_t count = kMinSlots;
    while (count < 4 * size_)
      count *= 2;
    Rehash(count);
  }

  void Clear() {
    slots_.clear();
    mask_ = 0;
    size_ = 0;
  }

  std::size_t size() const { return size_; }
  std::size_t bytes() const { return slots_.capacity() * sizeof(Slot); }

 private:
  struct Slot {
    uint64_t key = 0;  // 0: empty
    Value value{};
  };
  static constexpr std::size_t kAbsent = ~std::size_t{0};
  static constexpr std::size_t kMinSlots = 16;

  std::size_t HomeOf(uint64_t key) const { return static_cast<std::size_t>(Mix64(key)) & mask_; }

  std::size_t SlotOf(uint64_t key) const {
    if (size_ == 0) return kAbsent;
    for (std::size_t at = HomeOf(key);; at = (at + 1) & mask_) {
      if (slots_[at].key == key) return at;
      if (slots_[at].key == 0) return kAbsent;
    }
  }

  void Grow() { Rehash(slots_.empty() ? kMinSlots : 2 * slots_.size()); }

  void Rehash(std::size_t count) {
    std::vector<Slot> old = std::move(slots_);
    slots_ = std::vector<Slot>(count);
    mask_ = count - 1;
    for (Slot& slot : old) {
      if (slot.key == 0) continue;
      std::size_t at = HomeOf(slot.key);
      while (slots_[at].key != 0)
        at = (at + 1) & mask_;
      slots_[at] = std::move(slot);
    }
  }

  std::vector<Slot> slots_;
  std::size_t mask_ = 0;
  std::size_t size_ = 0;
};

}  // namespace fleetsim
