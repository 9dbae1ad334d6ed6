#include "engine/block_pool.h"

#include <algorithm>
#include <cstdint>

#include "core/check.h"
#include "core/prefetch.h"

namespace fleetsim {

BlockPool::BlockPool(int64_t num_blocks) : num_blocks_(num_blocks), num_free_(num_blocks - 1) {
  FLEETSIM_CHECK(num_blocks >= 1 && num_blocks <= INT32_MAX,
                 "a pool holds the null block and fewer blocks than a block id counts");
  anonymous_tail_ = num_free_;
  anonymous_pushed_ = num_free_;  // every block, numbered in id order
}

void BlockPool::Save(CheckpointWriter& w) const {
  w.I64(num_blocks_);
  w.I64(num_free_);
  w.Pods(state_);
  // The chains in id order, so that equal pools write equal files.
  std::vector<Chain> chains;
  chains.reserve(next_same_.size());
  for (const auto& [block, next] : next_same_)
    chains.push_back({block, next});
  std::sort(chains.begin(), chains.end(),
            [](const Chain& a, const Chain& b) { return a.block < b.block; });
  w.Pods(chains);
  w.Pods(spare_ids_);
  w.Pods(queue_);  // popped entries too: a block's state holds its place in the vector
  w.U64(queue_head_);
  w.U64(queue_base_);
  w.I64(anonymous_tail_);
  w.I64(anonymous_pushed_);
  w.I64(anonymous_popped_);
  index_.Save(w);
}

void BlockPool::Load(CheckpointReader& r) {
  r.Require(r.I64() == num_blocks_, "pool size (another cluster config?)");
  num_free_ = r.I64();
  state_ = r.Pods<BlockState>();
  const auto chains = r.Pods<Chain>();
  spare_ids_ = r.Pods<BlockId>();
  queue_ = r.Pods<QueueEntry>();
  queue_head_ = r.U64();
  const uint64_t base = r.U64();
  r.Require(base <= UINT32_MAX, "free queue's first place");
  queue_base_ = static_cast<uint32_t>(base);
  anonymous_tail_ = r.I64();
  anonymous_pushed_ = r.I64();
  anonymous_popped_ = r.I64();
  holes_ = 0;
  const auto range = static_cast<BlockId>(state_.size());
  next_same_.clear();
  for (const auto& [block, next] : chains) {
    r.Require(block > kNullBlock && block <= range && next > kNullBlock && next <= range &&
                  (At(block).flags & kChained) != 0 && (At(next).flags & kBehind) != 0 &&
                  next_same_.emplace(block, next).second,
              "a chain of blocks cached under one key");
  }
  std::size_t chained = 0;
  for (const BlockState& state : state_)
    chained += (state.flags & kChained) != 0 ? 1 : 0;
  r.Require(chained == next_same_.size(), "every chained block has its next");
  r.Require(num_free_ >= 0 && num_free_ < num_blocks_ && anonymous_tail_ >= 0 &&
                static_cast<int64_t>(state_.size()) < num_blocks_ && queue_head_ <= queue_.size(),
            "block pool counts");
  int64_t queued = anonymous_tail_;
  int64_t anonymous_queued = anonymous_tail_;
  for (std::size_t i = queue_head_; i < queue_.size(); ++i) {
    const QueueEntry entry = queue_[i];
    if (entry == kHole) {
      ++holes_;
      continue;
    }
    if (entry < 0) {
      queued -= entry;
      anonymous_queued -= entry;
      continue;
    }
    r.Require(entry <= range, "a queued block has state");
    const BlockState& state = At(entry);
    r.Require(state.group >= 0 && Queued(state) &&
                  state.refs_or_entry == static_cast<uint32_t>(queue_base_ + i),
              "a queued block is cached, free and queued once");
    ++queued;
  }
  r.Require(queued == num_free_, "the free queue holds every free block");
  r.Require(anonymous_popped_ >= 0 && anonymous_pushed_ - anonymous_popped_ == anonymous_queued,
            "the free queue's anonymous blocks are numbered");
  index_.Load(r);
  cached_keys_ = 0;
  for (const BlockState& state : state_)
    cached_keys_ += state.group >= 0 && (state.flags & kBehind) == 0 ? 1 : 0;
  r.Require(static_cast<int64_t>(index_.size()) == cached_keys_,
            "one prefix index entry per cached key");
}

double BlockPool::Usage() const {
  const int64_t usable = num_blocks_ - 1;
  return usable <= 0 ? 0.0 : 1.0 - static_cast<double>(num_free_) / static_cast<double>(usable);
}

int64_t BlockPool::bytes() const {
  return static_cast<int64_t>(state_.capacity() * sizeof(BlockState) +
                              next_same_.size() * 2 * sizeof(Chain) +
                              spare_ids_.capacity() * sizeof(BlockId) +
                              queue_.capacity() * sizeof(QueueEntry) + index_.bytes());
}

bool BlockPool::IsFree(BlockId block) const {
  FLEETSIM_CHECK(block >= 0 && block < num_blocks_, "a block id inside the pool");
  if (block == kNullBlock) return false;
  return !Live(block) || RefCount(At(block)) == 0;
}

bool BlockPool::IsCached(BlockId block) const {
  FLEETSIM_CHECK(block >= 0 && block < num_blocks_, "a block id inside the pool");
  return Live(block) && At(block).group >= 0;
}

BlockId BlockPool::TakeAnonymous() {
  BlockState fresh;
  fresh.refs_or_entry = 1;
  if (!spare_ids_.empty()) {
    const BlockId block = spare_ids_.back();
    spare_ids_.pop_back();
    At(block) = fresh;
    return block;
  }
  // Every id in range is live, so there is one id fewer than usable blocks at most.
  FLEETSIM_CHECK(id_range() < num_blocks_ - 1, "a new id stays inside the pool");
  state_.push_back(fresh);
  return static_cast<BlockId>(state_.size());
}

void BlockPool::Release(BlockId block) {
  spare_ids_.push_back(block);
  if (spare_ids_.size() < state_.size()) return;
  // Nothing is live: the pool starts over from no state at all, so that an idle instance
  // keeps none whatever it held before (small vectors keep their room, to be reused). The
  // queue holds only anonymous runs then, which join the tail (a pop in progress reads the
  // queue afresh after each block it takes).
  constexpr std::size_t kKeep = 256;
  spare_ids_.clear();
  state_.clear();
  next_same_.clear();
  index_.Clear();
  for (std::size_t i = queue_head_; i < queue_.size(); ++i)
    anonymous_tail_ -= queue_[i];
  queue_.clear();
  queue_head_ = 0;
  queue_base_ = 0;
  holes_ = 0;
  if (state_.capacity() > kKeep) {
    state_.shrink_to_fit();
    spare_ids_.shrink_to_fit();
    queue_.shrink_to_fit();
  }
}

void BlockPool::PushTail(BlockId block) {
  CompactIfSparse();
  if (anonymous_tail_ > 0) {
    if (queue_.size() > queue_head_ && queue_.back() < 0) {
      queue_.back() -= static_cast<QueueEntry>(anonymous_tail_);
    } else {
      queue_.push_back(static_cast<QueueEntry>(-anonymous_tail_));
    }
    anonymous_tail_ = 0;
  }
  BlockState& state = At(block);
  state.refs_or_entry = static_cast<uint32_t>(queue_base_ + queue_.size());
  state.flags |= kQueued;
  queue_.push_back(block);
}

void BlockPool::CompactIfSparse() {
  if (queue_head_ >= 64 && 2 * queue_head_ > queue_.size()) {
    queue_.erase(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(queue_head_));
    queue_base_ += static_cast<uint32_t>(queue_head_);
    queue_head_ = 0;
  }
  if (holes_ >= 64 && 2 * holes_ > queue_.size() - queue_head_) Compact();
}

void BlockPool::Compact() {
  std::size_t kept = 0;
  for (std::size_t i = queue_head_; i < queue_.size(); ++i) {
    const QueueEntry entry = queue_[i];
    if (entry == kHole) continue;
    if (entry < 0 && kept > 0 && queue_[kept - 1] < 0) {
      queue_[kept - 1] += entry;
      continue;
    }
    if (entry > 0) At(entry).refs_or_entry = static_cast<uint32_t>(queue_base_ + kept);
    queue_[kept++] = entry;
  }
  queue_.resize(kept);
  queue_head_ = 0;
  holes_ = 0;
}

BlockId BlockPool::NextSame(BlockId block) const {
  return (At(block).flags & kChained) != 0 ? next_same_.at(block) : kNullBlock;
}

void BlockPool::SetNextSame(BlockId block, BlockId next) {
  BlockState& state = At(block);
  if (next == kNullBlock) {
    if ((state.flags & kChained) != 0) next_same_.erase(block);
    state.flags &= static_cast<uint8_t>(~kChained);
    return;
  }
  next_same_[block] = next;
  state.flags |= kChained;
}

void BlockPool::Evict(BlockId block) {
  BlockState& state = At(block);
  FLEETSIM_CHECK(state.group >= 0, "only a queued (cached) block is evicted");
  const CacheKey key{state.hash, state.group};
  if ((state.flags & (kBehind | kChained)) == 0) {  // the key's only block
    index_.Erase(key);
    --cached_keys_;
  } else if ((state.flags & kBehind) != 0) {  // a later block under a shared key
    BlockId before = index_.Find(key);
    while (NextSame(before) != block)
      before = NextSame(before);
    SetNextSame(before, NextSame(block));
    SetNextSame(block, kNullBlock);
  } else {  // the first of several: the next one is named
    const BlockId next = NextSame(block);
    index_.Replace(key, next);
    At(next).flags &= static_cast<uint8_t>(~kBehind);
    SetNextSame(block, kNullBlock);
  }
  // Out of the queue, uncached, with no references yet.
  state = BlockState{};
}

template <typename Anonymous, typename Cached>
void BlockPool::PopFree(int64_t n, Anonymous&& anonymous, Cached&& cached) {
  num_free_ -= n;
  while (n > 0) {
    if (queue_head_ == queue_.size()) {  // only the tail's anonymous blocks are left
      anonymous_tail_ -= n;
      anonymous_popped_ += n;
      anonymous(n);
      break;
    }
    const std::size_t at = queue_head_;
    if (at + kPrefetchAhead < queue_.size()) PrefetchState(queue_[at + kPrefetchAhead]);
    if (at + kPrefetchAhead / 2 < queue_.size()) PrefetchEntryOf(queue_[at + kPrefetchAhead / 2]);
    const QueueEntry entry = queue_[at];
    if (entry == kHole) {
      ++queue_head_;
      --holes_;
      continue;
    }
    if (entry < 0) {  // a run of anonymous blocks
      const int64_t taken = std::min<int64_t>(n, -static_cast<int64_t>(entry));
      queue_[at] += static_cast<QueueEntry>(taken);
      if (queue_[at] == 0) ++queue_head_;
      n -= taken;
      anonymous_popped_ += taken;
      anonymous(taken);
      continue;
    }
    // A cached block: its hash goes.
    ++queue_head_;
    Evict(entry);
    --n;
    cached(entry);
  }
  if (queue_head_ == queue_.size()) {
    queue_base_ += static_cast<uint32_t>(queue_.size());
    queue_.clear();
    queue_head_ = 0;
  }
}

bool BlockPool::Allocate(int64_t n, std::vector<BlockId>& out, bool anonymous) {
  if (anonymous) {
    if (!AllocateAnonymous(n)) return false;
    out.insert(out.end(), static_cast<std::size_t>(n), kAnonymousBlock);
    return true;
  }
  if (n > num_free()) return false;
  PopFree(
      n,
      [&](int64_t count) {
        for (int64_t i = 0; i < count; ++i)
          out.push_back(TakeAnonymous());
      },
      [&](BlockId block) {
        At(block).refs_or_entry = 1;
        out.push_back(block);
      });
  return true;
}

bool BlockPool::AllocateAnonymous(int64_t n) {
  if (n > num_free()) return false;
  // A cached block taken anonymously keeps no state.
  PopFree(
      n, [](int64_t) {}, [this](BlockId block) { Release(block); });
  return true;
}

BlockId BlockPool::Name(BlockId block) {
  return block == kAnonymousBlock ? TakeAnonymous() : block;
}

void BlockPool::Touch(BlockId block) {
  if (block == kNullBlock) return;
  FLEETSIM_CHECK(Live(block), "only a held or cached block can be hit");
  BlockState& state = At(block);
  if (Queued(state)) {  // a cached free block leaves the queue, a hole in its place
    queue_[static_cast<uint32_t>(state.refs_or_entry - queue_base_)] = kHole;
    ++holes_;
    --num_free_;
    state.flags &= static_cast<uint8_t>(~kQueued);
    state.refs_or_entry = 0;
  }
  ++state.refs_or_entry;
}

void BlockPool::Free(BlockId block) {
  if (block == kNullBlock) return;
  if (block == kAnonymousBlock) {
    FreeAnonymous(1);
    return;
  }
  FLEETSIM_CHECK(Live(block), "only a held block is freed");
  BlockState& state = At(block);
  FLEETSIM_CHECK(RefCount(state) > 0, "a block is freed at most once per reference");
  if (--state.refs_or_entry > 0) return;
  ++num_free_;
  if (state.group >= 0) {
    PushTail(block);
  } else {
    ++anonymous_tail_;
    ++anonymous_pushed_;
    Release(block);
  }
}

void BlockPool::Free(const std::vector<BlockId>& blocks) {
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    if (i + kPrefetchAhead < blocks.size()) PrefetchState(blocks[i + kPrefetchAhead]);
    Free(blocks[i]);
  }
}

void BlockPool::PrefetchState(BlockId block) const {
  if (block > kNullBlock && block <= id_range())
    PrefetchLine(&state_[static_cast<std::size_t>(block - 1)]);
}

void BlockPool::PrefetchEntryOf(QueueEntry entry) const {
  if (entry <= 0) return;  // a hole or a run of anonymous blocks
  const BlockState& state = At(entry);
  index_.Prefetch({state.hash, state.group});
}

void BlockPool::CacheQueuedAnonymous(int64_t first, std::span<const CacheKey> keys) {
  const auto count = static_cast<int64_t>(keys.size());
  if (count == 0) return;
  FLEETSIM_CHECK(first >= anonymous_popped_ && first + count <= anonymous_pushed_,
                 "only queued anonymous blocks are cached in place");
  // The queue again from its head, holes dropped, the runs that hold the blocks split
  // around them (rare: a conversation's next turn on the same instance). Every queued
  // block learns its new place, as Compact tells them.
  std::vector<QueueEntry> queue;
  queue.reserve(queue_.size() - queue_head_ + keys.size() + 2);
  const auto add_run = [&queue](int64_t run) {
    if (run <= 0) return;
    if (!queue.empty() && queue.back() < 0) {
      queue.back() -= static_cast<QueueEntry>(run);
    } else {
      queue.push_back(static_cast<QueueEntry>(-run));
    }
  };
  int64_t number = anonymous_popped_;  // of the next anonymous block met
  const auto add_anonymous = [&](int64_t run) {
    const int64_t from = std::max(number, first);
    const int64_t to = std::min(number + run, first + count);
    if (from >= to) {
      add_run(run);
    } else {
      add_run(from - number);
      for (int64_t k = from; k < to; ++k) {
        const BlockId block = TakeAnonymous();
        Cache(block, keys[static_cast<std::size_t>(k - first)]);
        queue.push_back(block);
      }
      add_run(number + run - to);
    }
    number += run;
  };
  for (std::size_t i = queue_head_; i < queue_.size(); ++i) {
    const QueueEntry entry = queue_[i];
    if (entry == kHole) continue;
    if (entry < 0) {
      add_anonymous(-static_cast<int64_t>(entry));
    } else {
      queue.push_back(entry);
    }
  }
  add_anonymous(anonymous_tail_);
  // What follows the last cached block is the tail again.
  anonymous_tail_ = 0;
  if (!queue.empty() && queue.back() < 0) {
    anonymous_tail_ = -static_cast<int64_t>(queue.back());
    queue.pop_back();
  }
  queue_ = std::move(queue);
  queue_head_ = 0;
  holes_ = 0;
  for (std::size_t i = 0; i < queue_.size(); ++i) {
    if (queue_[i] <= 0) continue;
    BlockState& state = At(queue_[i]);
    state.refs_or_entry = static_cast<uint32_t>(queue_base_ + i);
    state.flags |= kQueued;
  }
  anonymous_pushed_ -= count;
}

void BlockPool::Cache(BlockId block, CacheKey key) {
  if (block == kNullBlock) return;
  FLEETSIM_CHECK(Live(block), "only a held block is cached");
  FLEETSIM_CHECK(key.group >= 0 && key.group <= INT16_MAX, "a KV-cache group index");
  BlockState& state = At(block);
  if (state.group >= 0) return;
  state.hash = key.hash;
  state.group = static_cast<int16_t>(key.group);
  const BlockId first = index_.Insert(key, block);
  if (first != kNullBlock) {  // a key already cached: this block joins its chain
    FLEETSIM_CHECK(Carries(first, key), "an index entry names a block cached under its key");
    state.flags |= kBehind;
    BlockId last = first;
    while (NextSame(last) != kNullBlock)
      last = NextSame(last);
    SetNextSame(last, block);
    return;
  }
  ++cached_keys_;
}

}  // namespace fleetsim
