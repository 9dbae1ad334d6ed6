// A generated prompt, built by appending pieces of content, with a hash for each full block
// of `block_size` tokens (the block_hashes of a WorkloadRequest).
//
// Tokens are never materialized: a piece is a content id (a system prompt, a user message,
// a model output) and a token count, and token i of it is "token i of that content". A
// builder stands for one growing conversation (or one request's prompt): its first piece
// may be shared with other builders (a system prompt, a common prefix), every later piece
// is its own, and it only grows. So a block's content is named by where it lies:
//
//   - a block wholly inside the first piece, by that piece's content id and its index;
//   - any other block, by the builder's `family` (unique to it) and its index.
//
// Two blocks therefore have equal hashes iff their prompts agree up to and including
// them, as chained prefix hashes do. The hashes carry the index's low 4 bits in their own
// (BlockHashOf): a run of consecutive blocks shares all other bits, so the prefix index
// (PrefixIndex::HomeOf) places a run of 16 in adjacent slots, a few cache lines, instead of
// each in a line of its own.
//
//   PromptBuilder prompt(16, session_family);
//   prompt.Append(system_prompt_id, 800);  // 50 blocks, equal across sessions
//   prompt.Append(user_message_id, 37);    // + 2 blocks; 5 tokens wait for the next piece
//   request.block_hashes = prompt.block_hashes();
//
// Memory is a few words: hashes are computed when asked for.
#pragma once

#include <cstdint>
#include <vector>

namespace fleetsim::workload_gen {

// The hash of block `index` of content named by `name` (a first piece's content id, or a
// builder's family, each already tagged by its kind): `name` and the index's high bits
// mixed, with the index's low 4 bits in the low 4 bits.
uint64_t BlockHashOf(uint64_t name, int64_t index);

class PromptBuilder {
 public:
  // block_size 0: count tokens only, no hashes. `family`: unique to this builder among
  // all builders of a workload (builders sharing one would share their own blocks' names).
  PromptBuilder(int block_size, uint64_t family) : block_size_(block_size), family_(family) {}

  // Appends the first `tokens` tokens of content `content_id`.
  void Append(uint64_t content_id, int64_t tokens);

  int64_t tokens() const { return tokens_; }
  // The name of its own blocks (never another builder's), and how many blocks, from the
  // start, lie wholly inside the first piece -- those other builders may share.
  uint64_t own_name() const;
  int64_t first_piece_blocks() const { return block_size_ > 0 ? first_tokens_ / block_size_ : 0; }
  // The hashes of the full blocks so far, computed afresh (a few instructions a block):
  // kept, they would make a conversation's memory grow with its prompt, on every rank
  // that passes over its turns.
  std::vector<uint64_t> block_hashes() const;

 private:
  int block_size_;
  uint64_t family_;
  int64_t tokens_ = 0;
  uint64_t first_content_ = 0;
  int64_t first_tokens_ = 0;  // the first piece's length
};

}  // namespace fleetsim::workload_gen
