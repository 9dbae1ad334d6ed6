#include "engine/block_pool.h"

#include <algorithm>
#include <cassert>

namespace fleetsim {

BlockPool::BlockPool(int64_t num_blocks)
    : ref_count_(static_cast<std::size_t>(num_blocks), 0),
      prev_(static_cast<std::size_t>(num_blocks), -1),
      next_(static_cast<std::size_t>(num_blocks), -1),
      key_(static_cast<std::size_t>(num_blocks)) {
  assert(num_blocks >= 1);
  for (BlockId b = 1; b < static_cast<BlockId>(num_blocks); ++b)
    PushTail(b);
}

double BlockPool::Usage() const {
  const int64_t usable = num_blocks() - 1;
  return usable <= 0 ? 0.0 : 1.0 - static_cast<double>(num_free_) / static_cast<double>(usable);
}

void BlockPool::PushTail(BlockId block) {
  prev_[Index(block)] = tail_;
  next_[Index(block)] = -1;
  if (tail_ >= 0) next_[Index(tail_)] = block;
  tail_ = block;
  if (head_ < 0) head_ = block;
  ++num_free_;
}

void BlockPool::Unlink(BlockId block) {
  const BlockId p = prev_[Index(block)];
  const BlockId n = next_[Index(block)];
  (p >= 0 ? next_[Index(p)] : head_) = n;
  (n >= 0 ? prev_[Index(n)] : tail_) = p;
  prev_[Index(block)] = next_[Index(block)] = -1;
  --num_free_;
}

void BlockPool::Evict(BlockId block) {
  std::optional<CacheKey>& key = key_[Index(block)];
  if (!key) return;
  auto found = cached_.find(*key);
  if (found != cached_.end()) {
    auto& blocks = found->second;
    blocks.erase(std::find(blocks.begin(), blocks.end(), block));
    if (blocks.empty()) cached_.erase(found);
  }
  key.reset();
}

bool BlockPool::Allocate(int64_t n, std::vector<BlockId>& out) {
  if (n > num_free_) return false;
  for (int64_t i = 0; i < n; ++i) {
    const BlockId block = head_;
    Unlink(block);
    Evict(block);
    ref_count_[Index(block)] = 1;
    out.push_back(block);
  }
  return true;
}

void BlockPool::Touch(BlockId block) {
  if (block == kNullBlock) return;
  if (ref_count_[Index(block)] == 0) Unlink(block);
  ++ref_count_[Index(block)];
}

void BlockPool::Free(BlockId block) {
  if (block == kNullBlock) return;
  assert(ref_count_[Index(block)] > 0);
  if (--ref_count_[Index(block)] == 0) PushTail(block);
}

void BlockPool::Free(const std::vector<BlockId>& blocks) {
  for (BlockId block : blocks)
    Free(block);
}

void BlockPool::Cache(BlockId block, CacheKey key) {
  if (block == kNullBlock || key_[Index(block)]) return;
  key_[Index(block)] = key;
  cached_[key].push_back(block);
}

std::optional<BlockId> BlockPool::Lookup(CacheKey key) const {
  auto found = cached_.find(key);
  if (found == cached_.end()) return std::nullopt;
  return found->second.front();
}

}  // namespace fleetsim
