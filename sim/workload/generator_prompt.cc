#include "workload/generator_prompt.h"

#include "core/hash64.h"
#include "workload/generator_random.h"

namespace fleetsim::workload_gen {
namespace {

// Tags that keep the two kinds of names apart: a first piece's content id and a family.
constexpr uint64_t kFirstPieceTag = 0x666c65657473696dULL;  // "fleetsim" in ASCII
constexpr uint64_t kFamilyTag = 0x66616d696c790000ULL;      // "family"
constexpr uint64_t kLowBits = 15;                           // a run of 16 shares the rest

// The bits a run of 16 blocks of one name shares: all but the low 4.
uint64_t RunBitsOf(uint64_t name, uint64_t index) {
  return HashCombine(name, index >> 4) & ~kLowBits;
}

}  // namespace

uint64_t BlockHashOf(uint64_t name, int64_t index) {
  const uint64_t i = static_cast<uint64_t>(index);
  return RunBitsOf(name, i) | (i & kLowBits);
}

void PromptBuilder::Append(uint64_t content_id, int64_t tokens) {
  if (tokens <= 0) return;
  if (tokens_ == 0) {
    first_content_ = content_id;
    first_tokens_ = tokens;
  }
  tokens_ += tokens;
}

uint64_t PromptBuilder::own_name() const {
  return HashCombine(kFamilyTag, family_);
}

std::vector<uint64_t> PromptBuilder::block_hashes() const {
  std::vector<uint64_t> hashes;
  if (block_size_ <= 0) return hashes;
  const int64_t full = tokens_ / block_size_;
  const int64_t inside_first = first_piece_blocks();
  const uint64_t first = HashCombine(kFirstPieceTag, first_content_);
  const uint64_t own = own_name();
  hashes.resize(static_cast<std::size_t>(full));
  // BlockHashOf, with its mix taken once per run of 16 blocks of one name.
  uint64_t run = 0;
  for (int64_t j = 0; j < full; ++j) {
    const auto i = static_cast<uint64_t>(j);
    if ((i & kLowBits) == 0 || j == inside_first)
      run = RunBitsOf(j < inside_first ? first : own, i);
    hashes[static_cast<std::size_t>(j)] = run | (i & kLowBits);
  }
  return hashes;
}

}  // namespace fleetsim::workload_gen
