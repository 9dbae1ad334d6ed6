// A set of trace ids that keeps no strings: 8 bytes per slot, in kParts tables of a power
// of two slots each, each at most 3/4 full (11 to 21 bytes per id; a table that grows
// copies only itself, 1/kParts of the whole).
//
// A slot of a file's table holds 32 bits of the id's hash (which also place it) and the
// line that used it; when a new id's bits equal an earlier one's, that line's id is read
// again (`id_on_line`) and compared, so the set is exact (and the rare equal bits of two
// ids cost one read). A pipe cannot be read again: its slots hold the whole 64-bit hash
// instead, and equal hashes count as equal ids (wrongly for two of n ids with probability
// about n^2 / 2^65; no line is then known).
//
//   IdHashTable seen(IdHashTable::Keep::kLines);
//   if (auto earlier = seen.Add("9f3c-x", 12, id_on_line)) ...  // earlier->line used it
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fleetsim {

class IdHashTable {
 public:
  enum class Keep {
    kLines,  // hash bits and lines, compared by reading the line again (a file)
    kHashes  // whole hashes (a pipe)
  };
  explicit IdHashTable(Keep keep) : keep_(keep) {}

  // The id a line of the trace used, read again; nullopt when it cannot be (the file
  // changed): then equal bits count as equal ids.
  using IdOnLine = std::function<std::optional<std::string>(int line)>;

  struct Earlier {
    int line = 0;           // 0: not known (Keep::kHashes)
    bool compared = false;  // the ids were compared, not only their hashes
  };

  // Adds `id`, used on `line` (1 to 2^31 - 1); when an earlier line used it already, that
  // line instead.
  std::optional<Earlier> Add(std::string_view id, int line, const IdOnLine& id_on_line);

  std::size_t size() const { return size_; }
  // Slots over all parts: what the table costs is 8 bytes each.
  std::size_t capacity() const;

  static constexpr int kPartBits = 6;
  static constexpr std::size_t kParts = std::size_t{1} << kPartBits;

 private:
  static constexpr std::size_t kFirstCapacity = 64;  // per part, a power of two
  // The bits of a slot's entry that place it: its home slot is these modulo the capacity.
  uint64_t PlaceOf(uint64_t entry) const { return keep_ == Keep::kLines ? entry >> 32 : entry; }
  void Grow(std::vector<uint64_t>& part) const;

  Keep keep_;
  std::array<std::vector<uint64_t>, kParts> parts_;  // 0: an empty slot
  std::array<std::size_t, kParts> used_{};           // filled slots of each part
  std::size_t size_ = 0;
};

}  // namespace fleetsim
