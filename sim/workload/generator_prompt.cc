#include "workload/generator_prompt.h"

#include "core/hash64.h"
#include "workload/generator_random.h"

namespace fleetsim::workload_gen {
namespace {

// Tags that keep the two kinds of names apart: a first piece's content id and a family.
constexpr uint64_t kFirstPieceTag = 0x666c65657473696dULL;  // "fleetsim" in ASCII
constexpr uint64_t kFamilyTag = 0x66616d696c790000ULL;      // "family"
constexpr uint64_t kLowBits = 15;                           // a run of 16 shares the rest

}  // namespace

uint64_t BlockHashOf(uint64_t name, int64_t index) {
  const uint64_t i = static_cast<uint64_t>(index);
  return (HashCombine(name, i >> 4) & ~kLowBits) | (i & kLowBits);
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

const std::vector<uint64_t>& PromptBuilder::block_hashes() {
  if (block_size_ <= 0) return block_hashes_;
  const int64_t full = tokens_ / block_size_;
  const int64_t inside_first = first_piece_blocks();
  const uint64_t first = HashCombine(kFirstPieceTag, first_content_);
  const uint64_t own = own_name();
  for (auto j = static_cast<int64_t>(block_hashes_.size()); j < full; ++j) {
    block_hashes_.push_back(BlockHashOf(j < inside_first ? first : own, j));
  }
  return block_hashes_;
}

}  // namespace fleetsim::workload_gen
