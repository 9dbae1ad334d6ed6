#include "engine/block_pool.h"

#include <algorithm>

#include "core/check.h"

namespace fleetsim {

BlockPool::BlockPool(int64_t num_blocks) : num_blocks_(num_blocks), num_free_(num_blocks - 1) {
  FLEETSIM_CHECK(num_blocks >= 1, "a pool holds at least the null block");
}

double BlockPool::Usage() const {
  const int64_t usable = num_blocks_ - 1;
  return usable <= 0 ? 0.0 : 1.0 - static_cast<double>(num_free_) / static_cast<double>(usable);
}

BlockPool::BlockState& BlockPool::At(BlockId block) {
  FLEETSIM_CHECK(Used(block), "only a block handed out before has a state");
  return state_[static_cast<std::size_t>(block - 1)];
}

const BlockPool::BlockState& BlockPool::At(BlockId block) const {
  FLEETSIM_CHECK(Used(block), "only a block handed out before has a state");
  return state_[static_cast<std::size_t>(block - 1)];
}

bool BlockPool::IsFree(BlockId block) const {
  FLEETSIM_CHECK(block >= 0 && block < num_blocks_, "a block id inside the pool");
  if (block == kNullBlock) return false;
  return block >= next_fresh_ || At(block).ref_count == 0;
}

bool BlockPool::IsCached(BlockId block) const {
  FLEETSIM_CHECK(block >= 0 && block < num_blocks_, "a block id inside the pool");
  return Used(block) && At(block).group >= 0;
}

// Hands out the head of the never-used range. Capacity grows geometrically but never past
// the pool, so a full pool costs no more than one state per block.
BlockId BlockPool::Materialize() {
  if (state_.size() == state_.capacity()) {
    const auto usable = static_cast<std::size_t>(num_blocks_ - 1);
    state_.reserve(std::min(std::max<std::size_t>(2 * state_.capacity(), 64), usable));
  }
  BlockState state;
  state.ref_count = 1;
  state_.push_back(state);
  --num_free_;
  return next_fresh_++;
}

void BlockPool::PushTail(BlockId block) {
  BlockState& state = At(block);
  state.prev = tail_;
  state.next = -1;
  if (tail_ >= 0) At(tail_).next = block;
  tail_ = block;
  if (head_ < 0) head_ = block;
  ++num_free_;
}

void BlockPool::Unlink(BlockId block) {
  BlockState& state = At(block);
  const BlockId p = state.prev;
  const BlockId n = state.next;
  (p >= 0 ? At(p).next : head_) = n;
  (n >= 0 ? At(n).prev : tail_) = p;
  state.prev = state.next = -1;
  --num_free_;
}

void BlockPool::Evict(BlockId block) {
  BlockState& state = At(block);
  if (state.group < 0) return;
  const CacheKey key{state.hash, state.group};
  const auto key_of = [this](BlockId b) { return KeyOf(b); };
  const BlockId first = index_.Find(key, key_of);
  if (first == block) {
    if (state.next_same == kNullBlock) {
      index_.Erase(key, key_of);
    } else {
      index_.Replace(key, state.next_same, key_of);
    }
  } else {
    BlockId before = first;
    while (At(before).next_same != block)
      before = At(before).next_same;
    At(before).next_same = state.next_same;
  }
  state.group = -1;
  state.hash = 0;
  state.next_same = kNullBlock;
}

bool BlockPool::Allocate(int64_t n, std::vector<BlockId>& out) {
  if (n > num_free_) return false;
  for (int64_t i = 0; i < n; ++i) {
    if (next_fresh_ < num_blocks_) {  // never-used blocks are the head of the queue
      out.push_back(Materialize());
      continue;
    }
    const BlockId block = head_;
    Unlink(block);
    Evict(block);
    At(block).ref_count = 1;
    out.push_back(block);
  }
  return true;
}

void BlockPool::Touch(BlockId block) {
  if (block == kNullBlock) return;
  BlockState& state = At(block);  // only blocks handed out before can be hit
  if (state.ref_count == 0) Unlink(block);
  ++state.ref_count;
}

void BlockPool::Free(BlockId block) {
  if (block == kNullBlock) return;
  BlockState& state = At(block);
  FLEETSIM_CHECK(state.ref_count > 0, "a block is freed at most once per reference");
  if (--state.ref_count == 0) PushTail(block);
}

void BlockPool::Free(const std::vector<BlockId>& blocks) {
  for (BlockId block : blocks)
    Free(block);
}

void BlockPool::Cache(BlockId block, CacheKey key) {
  if (block == kNullBlock) return;
  BlockState& state = At(block);
  if (state.group >= 0) return;
  const BlockId first = index_.Find(key, [this](BlockId b) { return KeyOf(b); });
  state.hash = key.hash;
  state.group = key.group;
  if (first == kNullBlock) {
    index_.Insert(key, block);
    return;
  }
  BlockId last = first;
  while (At(last).next_same != kNullBlock)
    last = At(last).next_same;
  At(last).next_same = block;
}

std::optional<BlockId> BlockPool::Lookup(CacheKey key) const {
  const BlockId first = index_.Find(key, [this](BlockId b) { return KeyOf(b); });
  if (first == kNullBlock) return std::nullopt;
  return first;
}

}  // namespace fleetsim
