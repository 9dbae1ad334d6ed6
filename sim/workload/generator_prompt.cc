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
  if (block_size_ > 0 && tokens > 0) unhashed_.push_back({content_id, 0, tokens});
}

const std::vector<uint64_t>& PromptBuilder::block_hashes() {
  for (const Piece& whole : unhashed_) {
    int64_t offset = 0;
    while (offset < whole.length) {
      const int64_t take = std::min(whole.length - offset, block_size_ - partial_tokens_);
      partial_.push_back({whole.content_id, offset, take});
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
  unhashed_.clear();
  return block_hashes_;
}

}  // namespace fleetsim::workload_gen
