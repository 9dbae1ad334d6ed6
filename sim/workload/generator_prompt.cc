#include "workload/generator_prompt.h"

#include <algorithm>

#include "workload/generator_random.h"

namespace fleetsim::workload_gen {
namespace {

// The chain's starting value, so that the first block also has a predecessor.
constexpr uint64_t kChainStart = 0x666c65657473696dULL;  // "fleetsim" in ASCII

}  // namespace

void PromptBuilder::Append(uint64_t content_id, int64_t tokens) {
  tokens_ += tokens;
  if (block_size_ <= 0) return;
  int64_t offset = 0;
  while (offset < tokens) {
    const int64_t take = std::min(tokens - offset, block_size_ - partial_tokens_);
    partial_.push_back({content_id, offset, take});
    partial_tokens_ += take;
    offset += take;
    if (partial_tokens_ < block_size_) break;
    uint64_t h = block_hashes_.empty() ? kChainStart : block_hashes_.back();
    for (const Piece& piece : partial_) {
      h = HashCombine(h, piece.content_id);
      h = HashCombine(h, static_cast<uint64_t>(piece.offset));
      h = HashCombine(h, static_cast<uint64_t>(piece.length));
    }
    block_hashes_.push_back(h);
    partial_.clear();
    partial_tokens_ = 0;
  }
}

}  // namespace fleetsim::workload_gen
