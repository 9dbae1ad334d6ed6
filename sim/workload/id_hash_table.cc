#include "workload/id_hash_table.h"

#include "core/hash64.h"

namespace fleetsim {

std::size_t IdHashTable::capacity() const {
  std::size_t slots = 0;
  for (const std::vector<uint64_t>& part : parts_)
    slots += part.size();
  return slots;
}

void IdHashTable::Grow(std::vector<uint64_t>& part) const {
  std::vector<uint64_t> old = std::move(part);
  part.assign(old.empty() ? kFirstCapacity : 2 * old.size(), 0);
  const uint64_t mask = part.size() - 1;
  for (uint64_t entry : old) {
    if (entry == 0) continue;
    uint64_t slot = PlaceOf(entry) & mask;
    while (part[slot] != 0)
      slot = (slot + 1) & mask;
    part[slot] = entry;
  }
}

std::optional<IdHashTable::Earlier> IdHashTable::Add(std::string_view id, int line,
                                                     const IdOnLine& id_on_line) {
  // std::hash of the bytes, then SplitMix64's finalizer so that every bit is well mixed:
  // the top kPartBits pick the part, the low 32 place the id (and are kept, for a file).
  const uint64_t hash = Mix64(std::hash<std::string_view>{}(id));
  const std::size_t which = hash >> (64 - kPartBits);
  std::vector<uint64_t>& part = parts_[which];
  if (4 * (used_[which] + 1) > 3 * part.size()) Grow(part);
  const uint64_t mine = keep_ == Keep::kLines
                            ? (hash << 32) | static_cast<uint32_t>(line)  // never 0: line >= 1
                            : (hash == 0 ? 1 : hash);
  const uint64_t mask = part.size() - 1;
  uint64_t slot = PlaceOf(mine) & mask;
  // Linear probing: every earlier id placed like this one lies between its home slot and
  // the first empty one.
  for (; part[slot] != 0; slot = (slot + 1) & mask) {
    const uint64_t entry = part[slot];
    if (PlaceOf(entry) != PlaceOf(mine)) continue;
    if (keep_ == Keep::kHashes) return Earlier{0, false};
    const int earlier_line = static_cast<int>(static_cast<uint32_t>(entry));
    const std::optional<std::string> earlier = id_on_line(earlier_line);
    if (!earlier) return Earlier{earlier_line, false};
    if (*earlier == id) return Earlier{earlier_line, true};
    // Two ids, equal bits: both are kept, and a third equal to either is still found.
  }
  part[slot] = mine;
  ++used_[which];
  ++size_;
  return std::nullopt;
}

}  // namespace fleetsim
