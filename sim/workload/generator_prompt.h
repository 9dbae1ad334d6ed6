// A generated prompt, built by appending pieces of content, with the chained hash of each
// full block of `block_size` tokens (the block_hashes of a WorkloadRequest).
//
// Tokens are never materialized: a piece is a content id (a system prompt, a user message,
// a model output) and a token count, and token i of it is "token i of that content". Two
// prompts therefore agree through a block iff they were built from the same pieces up to
// there, and a block's hash folds in every piece of it and the previous block's hash:
//
//   PromptBuilder prompt(16);
//   prompt.Append(system_prompt_id, 800);  // 50 blocks, equal across sessions
//   prompt.Append(user_message_id, 37);    // + 2 blocks; 5 tokens wait for the next piece
//   request.block_hashes = prompt.block_hashes();
//
// Memory is one hash per full block plus the pieces of the partial last block and those
// appended since the hashes were last asked for.
#pragma once

#include <cstdint>
#include <vector>

namespace fleetsim::workload_gen {

class PromptBuilder {
 public:
  // block_size 0: count tokens only, no hashes.
  explicit PromptBuilder(int block_size) : block_size_(block_size) {}

  // Appends the first `tokens` tokens of content `content_id`.
  void Append(uint64_t content_id, int64_t tokens);

  int64_t tokens() const { return tokens_; }
  // The hashes of the full blocks so far. Appending only records the piece: the hashing
  // waits for this call, so a rank that passes over a session's turns (and may never make
  // one of them) does not pay for it.
  const std::vector<uint64_t>& block_hashes();

 private:
  struct Piece {
    uint64_t content_id;
    int64_t offset;
    int64_t length;
  };

  int block_size_;
  int64_t tokens_ = 0;
  std::vector<Piece> unhashed_;  // appended since the last block_hashes(), whole
  std::vector<Piece> partial_;   // the hashed pieces of the unfinished last block
  int64_t partial_tokens_ = 0;
  std::vector<uint64_t> block_hashes_;
};

}  // namespace fleetsim::workload_gen
