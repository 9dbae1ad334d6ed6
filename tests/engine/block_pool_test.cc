#include "engine/block_pool.h"

#include <algorithm>
#include <cstddef>
#include <list>
#include <random>
#include <stdexcept>
#include <string>
#include <unordered_map>

#include <gtest/gtest.h>

#include "core/checkpoint_io.h"

namespace fleetsim {
namespace {

TEST(BlockPool, NullBlockIsNeverHandedOut) {
  BlockPool pool(4);
  EXPECT_EQ(pool.num_free(), 3);
  std::vector<BlockId> got;
  ASSERT_TRUE(pool.Allocate(3, got));
  EXPECT_EQ(got, (std::vector<BlockId>{1, 2, 3}));
  EXPECT_FALSE(pool.Allocate(1, got));
  EXPECT_EQ(got.size(), 3u);  // a failed allocation takes nothing
  EXPECT_DOUBLE_EQ(pool.Usage(), 1.0);
}

TEST(BlockPool, FreedTailIsEvictedFirstAndHitsLeaveTheQueue) {
  BlockPool pool(5);  // usable 1..4
  std::vector<BlockId> request;
  ASSERT_TRUE(pool.Allocate(4, request));
  for (BlockId b : request)
    pool.Cache(b, {static_cast<BlockHash>(100 + b), 0});
  // A finished request frees its last blocks first, so its tail is evicted before its head.
  pool.Free(std::vector<BlockId>(request.rbegin(), request.rend()));
  EXPECT_EQ(pool.num_free(), 4);
  EXPECT_DOUBLE_EQ(pool.Usage(), 0.0);  // cached-but-free blocks count as free

  std::vector<BlockId> got;
  ASSERT_TRUE(pool.Allocate(1, got));
  EXPECT_EQ(got.back(), 4);                         // the head of the free queue
  EXPECT_FALSE(pool.Lookup({104, 0}).has_value());  // its hash is gone (lazy eviction)
  EXPECT_EQ(pool.Lookup({101, 0}), BlockId{1});     // the others stay cached

  // A hit on a free block takes it out of the queue: the next allocation skips it.
  pool.Touch(3);
  EXPECT_EQ(pool.num_free(), 2);
  ASSERT_TRUE(pool.Allocate(1, got));
  EXPECT_EQ(got.back(), 2);
  EXPECT_EQ(pool.Lookup({103, 0}), BlockId{3});
}

TEST(BlockPool, HashesAreKeptPerGroup) {
  BlockPool pool(3);
  std::vector<BlockId> got;
  ASSERT_TRUE(pool.Allocate(2, got));
  pool.Cache(got[0], {7, 0});
  EXPECT_TRUE(pool.Lookup({7, 0}));
  EXPECT_FALSE(pool.Lookup({7, 1}));
  pool.Cache(got[0], {8, 0});  // a cached block keeps its first hash
  EXPECT_FALSE(pool.Lookup({8, 0}));
}

TEST(BlockPool, SharedBlocksReturnWhenTheLastReferenceGoes) {
  BlockPool pool(3);
  std::vector<BlockId> got;
  ASSERT_TRUE(pool.Allocate(1, got));
  pool.Touch(got[0]);  // a second request shares it
  pool.Free(got[0]);
  EXPECT_EQ(pool.num_free(), 1);
  pool.Free(got[0]);
  EXPECT_EQ(pool.num_free(), 2);
}

TEST(BlockPool, StateFollowsTheLiveBlocksNotThePoolSize) {
  BlockPool pool(1'000'000);
  EXPECT_EQ(pool.live_blocks(), 0);
  EXPECT_EQ(pool.num_free(), 999'999);
  EXPECT_TRUE(pool.IsFree(999'999));
  EXPECT_FALSE(pool.IsCached(999'999));
  EXPECT_FALSE(pool.IsFree(kNullBlock));

  std::vector<BlockId> got;
  ASSERT_TRUE(pool.Allocate(10, got));
  EXPECT_EQ(got, (std::vector<BlockId>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}));
  EXPECT_EQ(pool.live_blocks(), 10);
  pool.Cache(got[0], {42, 0});
  pool.Touch(got[0]);
  pool.Free(got);
  pool.Free(got[0]);
  EXPECT_EQ(pool.num_free(), 999'999);
  // Only the cached block keeps state; the nine others are anonymous free blocks.
  EXPECT_EQ(pool.live_blocks(), 1);
  EXPECT_EQ(pool.Lookup({42, 0}), BlockId{1});
  EXPECT_DOUBLE_EQ(pool.Usage(), 0.0);
  // Anonymous blocks are handed out again under the spare ids: the range does not grow.
  got.clear();
  ASSERT_TRUE(pool.Allocate(9, got));
  EXPECT_EQ(pool.id_range(), 10);
  pool.Free(got);
  EXPECT_EQ(pool.live_blocks(), 1);
}

TEST(BlockPool, AnIdlePoolWithNothingCachedKeepsNoState) {
  BlockPool pool(100'000);
  std::vector<BlockId> got;
  ASSERT_TRUE(pool.Allocate(5'000, got));
  EXPECT_GE(pool.bytes(), 5'000 * 16);
  pool.Free(got);
  EXPECT_EQ(pool.live_blocks(), 0);
  EXPECT_EQ(pool.id_range(), 0);
  EXPECT_EQ(pool.bytes(), 0);
  EXPECT_EQ(pool.num_free(), 99'999);
}

// The queue order shows in which cached blocks are evicted first.
TEST(BlockPool, FreedBlocksQueueBehindTheNeverUsedOnes) {
  BlockPool pool(6);  // usable 1..5
  std::vector<BlockId> got;
  ASSERT_TRUE(pool.Allocate(2, got));
  pool.Cache(got[0], {100, 0});
  pool.Cache(got[1], {101, 0});
  pool.Free(got[1]);
  pool.Free(got[0]);
  std::vector<BlockId> more;
  ASSERT_TRUE(pool.Allocate(3, more));  // the three never used
  EXPECT_TRUE(pool.Lookup({100, 0}));
  EXPECT_TRUE(pool.Lookup({101, 0}));
  ASSERT_TRUE(pool.Allocate(1, more));  // then the first freed
  EXPECT_EQ(more.back(), got[1]);
  EXPECT_FALSE(pool.Lookup({101, 0}));
  EXPECT_EQ(pool.Lookup({100, 0}), got[0]);
}

TEST(BlockPool, AnonymousBlocksKeepTheirPlaceAroundCachedOnes) {
  BlockPool pool(8);  // usable 1..7
  std::vector<BlockId> got;
  ASSERT_TRUE(pool.Allocate(7, got));
  pool.Cache(got[2], {1, 0});
  pool.Cache(got[4], {2, 0});
  // Queue after the frees: anonymous 0, 1, then cached 2, anonymous 3, cached 4, anon. 5, 6.
  for (BlockId b : got)
    pool.Free(b);
  pool.Touch(got[2]);  // a hit takes the first cached block out; its anonymous stay ahead
  std::vector<BlockId> more;
  ASSERT_TRUE(pool.Allocate(3, more));  // anonymous 0, 1, 3
  EXPECT_TRUE(pool.Lookup({2, 0}));
  ASSERT_TRUE(pool.Allocate(1, more));  // cached 4 goes
  EXPECT_FALSE(pool.Lookup({2, 0}));
  EXPECT_EQ(more.back(), got[4]);
  EXPECT_EQ(pool.num_free(), 2);
}

// Anonymous free blocks are numbered as they join the queue; caching some of them later
// puts them in the index in their places, as if cached before they were freed, and the
// numbers after them close up.
TEST(BlockPool, QueuedAnonymousBlocksAreNumberedAndCachedInTheirPlaces) {
  BlockPool pool(10);  // usable 1..9, numbered 0..8 in id order while never used
  EXPECT_EQ(pool.anonymous_pushed(), 9);
  EXPECT_EQ(pool.anonymous_popped(), 0);
  ASSERT_TRUE(pool.AllocateAnonymous(5));
  EXPECT_EQ(pool.anonymous_popped(), 5);
  std::vector<BlockId> named;
  ASSERT_TRUE(pool.Allocate(1, named));  // number 5
  pool.Cache(named[0], {100, 0});
  // Queue: 3 never used (6, 7, 8), then the five freed anonymously (9..13), then cached 100.
  pool.FreeAnonymous(5);
  pool.Free(named[0]);
  EXPECT_EQ(pool.anonymous_pushed(), 14);
  // Blocks numbered 10 and 11 carry keys 1 and 2 after all.
  const std::vector<CacheKey> keys = {{1, 0}, {2, 0}};
  pool.CacheQueuedAnonymous(10, keys);
  EXPECT_EQ(pool.anonymous_pushed(), 12);  // 12 and 13 are now 10 and 11
  EXPECT_EQ(pool.num_free(), 9);
  ASSERT_TRUE(pool.Lookup({1, 0}));
  ASSERT_TRUE(pool.Lookup({2, 0}));
  // A hit takes one out of the queue; the others keep their order.
  pool.Touch(*pool.Lookup({2, 0}));
  EXPECT_EQ(pool.num_free(), 8);
  ASSERT_TRUE(pool.AllocateAnonymous(4));  // 6, 7, 8 and 9 (anonymous)
  EXPECT_TRUE(pool.Lookup({1, 0}));
  EXPECT_EQ(pool.anonymous_popped(), 10);
  ASSERT_TRUE(pool.AllocateAnonymous(1));  // cached 1 is evicted in its place
  EXPECT_FALSE(pool.Lookup({1, 0}));
  EXPECT_EQ(pool.anonymous_popped(), 10);
  ASSERT_TRUE(pool.AllocateAnonymous(2));  // the last two anonymous
  EXPECT_EQ(pool.anonymous_popped(), 12);
  EXPECT_TRUE(pool.Lookup({100, 0}));
  ASSERT_TRUE(pool.AllocateAnonymous(1));  // and then cached 100
  EXPECT_FALSE(pool.Lookup({100, 0}));
  EXPECT_EQ(pool.num_free(), 0);
  // Saved and loaded, the numbering stays.
  CheckpointWriter w;
  pool.Save(w);
  BlockPool loaded(10);
  CheckpointReader r(w.bytes(), "pool.bin");
  loaded.Load(r);
  EXPECT_EQ(loaded.anonymous_pushed(), 12);
  EXPECT_EQ(loaded.anonymous_popped(), 12);
}

// Blocks held anonymously (content that is never cached) cost a count, no state; one
// named later (about to be cached) gets an id; taken from the queue, they evict as others.
TEST(BlockPool, AnonymouslyHeldBlocksCostACountAndCanBeNamed) {
  BlockPool pool(6);  // usable 1..5
  std::vector<BlockId> anonymous;
  ASSERT_TRUE(pool.Allocate(2, anonymous, true));
  EXPECT_EQ(anonymous, (std::vector<BlockId>{kAnonymousBlock, kAnonymousBlock}));
  EXPECT_EQ(pool.live_blocks(), 0);
  EXPECT_EQ(pool.num_free(), 3);
  std::vector<BlockId> named;
  ASSERT_TRUE(pool.Allocate(1, named));
  pool.Cache(named[0], {7, 0});
  pool.Free(named[0]);
  anonymous[0] = pool.Name(anonymous[0]);
  ASSERT_NE(anonymous[0], kAnonymousBlock);
  EXPECT_EQ(pool.Name(anonymous[0]), anonymous[0]);  // a named block keeps its name
  pool.Cache(anonymous[0], {8, 0});
  pool.Free(anonymous[0]);
  pool.Free(anonymous[1]);
  EXPECT_EQ(pool.num_free(), 5);
  EXPECT_EQ(pool.live_blocks(), 2);  // the two cached
  EXPECT_EQ(pool.Lookup({8, 0}), anonymous[0]);
  EXPECT_THROW(pool.Cache(kAnonymousBlock, {9, 0}), std::logic_error);  // name it first

  // Queue: two never used, cached 7, cached 8, one anonymous. Taking four anonymously
  // evicts 7 and 8 and leaves no state.
  std::vector<BlockId> all;
  ASSERT_TRUE(pool.Allocate(4, all, true));
  EXPECT_FALSE(pool.Lookup({7, 0}));
  EXPECT_FALSE(pool.Lookup({8, 0}));
  EXPECT_EQ(pool.live_blocks(), 0);
  EXPECT_EQ(pool.num_free(), 1);
}

struct CacheKeyHasher {
  std::size_t operator()(const CacheKey& key) const {
    return static_cast<std::size_t>(key.hash * 0x9E3779B97F4A7C15ULL) ^
           static_cast<std::size_t>(key.group);
  }
};

// The free queue written the obvious way (vLLM's FreeKVCacheBlockQueue with eager state
// for every block), to check BlockPool against.
class ReferencePool {
 public:
  explicit ReferencePool(int64_t num_blocks)
      : num_blocks_(num_blocks), ref_count_(static_cast<std::size_t>(num_blocks), 0) {
    for (BlockId b = 1; b < num_blocks; ++b)
      where_[b] = queue_.insert(queue_.end(), b);
  }

  int64_t num_free() const { return static_cast<int64_t>(queue_.size()); }
  double Usage() const {
    const int64_t usable = num_blocks_ - 1;
    return usable <= 0 ? 0.0 : 1.0 - static_cast<double>(num_free()) / static_cast<double>(usable);
  }
  bool Allocate(int64_t n, std::vector<BlockId>& out) {
    if (n > num_free()) return false;
    for (int64_t i = 0; i < n; ++i) {
      const BlockId block = queue_.front();
      queue_.pop_front();
      where_.erase(block);
      auto key = key_.find(block);
      if (key != key_.end()) {
        auto& blocks = cached_[key->second];
        blocks.erase(std::find(blocks.begin(), blocks.end(), block));
        if (blocks.empty()) cached_.erase(key->second);
        key_.erase(key);
      }
      Ref(block) = 1;
      out.push_back(block);
    }
    return true;
  }
  void Touch(BlockId block) {
    if (block == kNullBlock) return;
    if (Ref(block) == 0) {
      queue_.erase(where_.at(block));
      where_.erase(block);
    }
    ++Ref(block);
  }
  void Free(BlockId block) {
    if (block == kNullBlock) return;
    if (--Ref(block) == 0) where_[block] = queue_.insert(queue_.end(), block);
  }
  bool IsFree(BlockId block) const {
    return block != kNullBlock && ref_count_[static_cast<std::size_t>(block)] == 0;
  }
  bool IsCached(BlockId block) const { return key_.count(block) > 0; }
  int64_t cached_keys() const { return static_cast<int64_t>(cached_.size()); }
  void Cache(BlockId block, CacheKey key) {
    if (block == kNullBlock || key_.count(block) > 0) return;
    key_[block] = key;
    cached_[key].push_back(block);
  }
  std::optional<BlockId> Lookup(CacheKey key) const {
    auto found = cached_.find(key);
    if (found == cached_.end()) return std::nullopt;
    return found->second.front();
  }

 private:
  int32_t& Ref(BlockId block) { return ref_count_[static_cast<std::size_t>(block)]; }

  int64_t num_blocks_;
  std::vector<int32_t> ref_count_;
  std::list<BlockId> queue_;
  std::unordered_map<BlockId, std::list<BlockId>::iterator> where_;
  std::unordered_map<BlockId, CacheKey> key_;
  std::unordered_map<CacheKey, std::vector<BlockId>, CacheKeyHasher> cached_;
};

// Random Allocate/Free/Touch/Cache/Lookup sequences, every result compared with the
// reference -- up to the names of blocks: both hand out blocks in the same order, and
// BlockPool may give a block another id than the reference's, so each id it hands out is
// mapped to the reference's. Draws use the raw engine output only (distributions differ
// between libraries).
// Every `restart_every` steps (0: never) the pool is saved and continues as a fresh one
// loaded from that, which must save the same bytes.
void RunDifferential(int64_t num_blocks, uint64_t seed, int steps, int restart_every = 0) {
  SCOPED_TRACE(testing::Message() << "num_blocks=" << num_blocks << " seed=" << seed);
  std::mt19937_64 rng(seed);
  auto below = [&rng](int64_t n) { return static_cast<int64_t>(rng() % static_cast<uint64_t>(n)); };
  auto random_key = [&below]() {
    return CacheKey{static_cast<BlockHash>(below(24)), static_cast<int>(below(2))};
  };
  BlockPool pool(num_blocks);
  ReferencePool ref(num_blocks);
  std::unordered_map<BlockId, BlockId> to_ref{{kNullBlock, kNullBlock}};    // pool id -> ref id
  std::unordered_map<BlockId, BlockId> from_ref{{kNullBlock, kNullBlock}};  // and back
  auto ref_of = [&to_ref](std::optional<BlockId> block) -> std::optional<BlockId> {
    if (!block) return std::nullopt;
    return to_ref.at(*block);
  };
  std::vector<BlockId> held;  // pool ids, one entry per reference taken
  int64_t peak_live = 0;
  // Live blocks among the reference's [first, end), each checked against its pool block;
  // -1 on a mismatch.
  auto check_blocks = [&](BlockId first, BlockId end) -> int64_t {
    int64_t live = 0;
    for (BlockId b = first; b < end; ++b) {
      const bool ref_live = b != kNullBlock && (!ref.IsFree(b) || ref.IsCached(b));
      live += ref_live ? 1 : 0;
      if (!ref_live) continue;
      const BlockId mine = from_ref.at(b);
      if (to_ref.at(mine) != b || pool.IsFree(mine) != ref.IsFree(b) ||
          pool.IsCached(mine) != ref.IsCached(b)) {
        ADD_FAILURE() << "block " << mine << " is not the reference's " << b;
        return -1;
      }
    }
    return live;
  };

  for (int step = 0; step < steps; ++step) {
    SCOPED_TRACE(step);
    if (restart_every > 0 && step % restart_every == restart_every - 1) {
      CheckpointWriter saved;
      pool.Save(saved);
      pool = BlockPool(num_blocks);
      CheckpointReader reader(saved.bytes(), "pool.bin");
      pool.Load(reader);
      ASSERT_TRUE(reader.done());
      CheckpointWriter again;
      pool.Save(again);
      ASSERT_EQ(saved.bytes(), again.bytes()) << "a saved field is not loaded";
    }
    const int64_t op = below(100);
    if (op < 30) {  // allocate, now and then more than is free
      const int64_t n = below(4) == 0 ? below(num_blocks + 1) : below(num_blocks / 8 + 2);
      std::vector<BlockId> got, want;
      const bool ok = pool.Allocate(n, got);
      ASSERT_EQ(ok, ref.Allocate(n, want));
      ASSERT_EQ(got.size(), want.size());
      for (std::size_t i = 0; i < got.size(); ++i) {
        ASSERT_NE(got[i], kNullBlock);
        to_ref[got[i]] = want[i];
        from_ref[want[i]] = got[i];
      }
      held.insert(held.end(), got.begin(), got.end());
    } else if (op < 55 && !held.empty()) {  // free a random batch in a random order
      std::vector<BlockId> batch;
      for (int64_t k = below(static_cast<int64_t>(held.size())) + 1; k > 0; --k) {
        const auto at = static_cast<std::size_t>(below(static_cast<int64_t>(held.size())));
        batch.push_back(held[at]);
        held[at] = held.back();
        held.pop_back();
      }
      if (below(5) == 0) batch.push_back(kNullBlock);
      std::vector<BlockId> ref_batch;
      for (BlockId b : batch)
        ref_batch.push_back(to_ref.at(b));
      if (batch.size() == 1 && below(2) == 0) {
        pool.Free(batch[0]);
      } else {
        pool.Free(batch);
      }
      for (BlockId b : ref_batch)
        ref.Free(b);
    } else if (op < 70) {  // a prefix hit, or one more reference to a held block
      std::optional<BlockId> block;
      if (below(2) == 0) {
        const CacheKey key = random_key();
        block = pool.Lookup(key);
        ASSERT_EQ(ref_of(block), ref.Lookup(key));
      } else if (!held.empty()) {
        block = held[static_cast<std::size_t>(below(static_cast<int64_t>(held.size())))];
      }
      if (block) {
        const BlockId theirs = to_ref.at(*block);
        pool.Touch(*block);
        ref.Touch(theirs);
        if (*block != kNullBlock) held.push_back(*block);
      }
    } else if (op < 85 && !held.empty()) {  // cache a held block
      const BlockId block =
          held[static_cast<std::size_t>(below(static_cast<int64_t>(held.size())))];
      const CacheKey key = random_key();
      pool.Cache(block, key);
      ref.Cache(to_ref.at(block), key);
    } else {  // lookups and per-block queries
      const CacheKey key = random_key();
      ASSERT_EQ(ref_of(pool.Lookup(key)), ref.Lookup(key));
      const auto b = static_cast<BlockId>(below(num_blocks));
      ASSERT_GE(check_blocks(b, b + 1), 0);
    }
    ASSERT_EQ(pool.num_free(), ref.num_free());
    ASSERT_EQ(pool.Usage(), ref.Usage());
    ASSERT_EQ(pool.cached_keys(), ref.cached_keys());
    ASSERT_EQ(pool.index_entries(), pool.cached_keys());  // evicted keys leave the index
    if (num_blocks <= 64 || step % 8 == 0 || step + 1 == steps) {
      const int64_t live = check_blocks(0, static_cast<BlockId>(num_blocks));
      ASSERT_GE(live, 0);
      ASSERT_EQ(pool.live_blocks(), live);
    }
    peak_live = std::max(peak_live, pool.live_blocks());
    ASSERT_LE(pool.id_range(), peak_live);  // ids stay below the peak of live blocks
  }
}

TEST(BlockPool, MatchesTheEagerFreeQueueOnRandomOperations) {
  for (int64_t num_blocks : {1, 2, 3, 9, 64, 513})
    for (uint64_t seed : {1u, 2u, 3u, 20260101u})
      RunDifferential(num_blocks, seed, 4000);
}

// The same through restarts: the free queue's popped entries, holes and runs are saved and
// loaded as they stand, so a restarted pool evicts in the same order.
TEST(BlockPool, MatchesTheEagerFreeQueueThroughRestarts) {
  for (int64_t num_blocks : {9, 513, 2049})
    for (uint64_t seed : {4u, 5u})
      RunDifferential(num_blocks, seed, 6000, 97);
}

// Hits on free cached blocks leave holes in the queue; the queue is compacted, so a pool
// cycling the same cached prefix forever keeps the memory of one cycle, and the order
// stays the list's: the never-used blocks go first, then the prefix from its last free.
TEST(BlockPool, HolesFromHitsAreCompactedAway) {
  constexpr int kPrefix = 500;
  BlockPool pool(1'001);
  std::vector<BlockId> prefix;
  ASSERT_TRUE(pool.Allocate(kPrefix, prefix));
  for (int i = 0; i < kPrefix; ++i)
    pool.Cache(prefix[static_cast<std::size_t>(i)], {static_cast<BlockHash>(i), 0});
  pool.Free(prefix);
  int64_t bytes_after_few = 0;
  for (int cycle = 0; cycle < 2'000; ++cycle) {
    for (BlockId block : prefix)
      pool.Touch(block);
    std::vector<BlockId> reversed(prefix.rbegin(), prefix.rend());
    pool.Free(reversed);
    if (cycle == 10) bytes_after_few = pool.bytes();
  }
  EXPECT_EQ(pool.bytes(), bytes_after_few);
  EXPECT_EQ(pool.num_free(), 1'000);
  std::vector<BlockId> got;
  ASSERT_TRUE(pool.Allocate(kPrefix, got, true));  // the never-used half
  EXPECT_EQ(pool.cached_keys(), kPrefix);
  ASSERT_TRUE(pool.Allocate(1, got));  // then the last block, freed first
  EXPECT_EQ(got.back(), prefix.back());
  EXPECT_FALSE(pool.Lookup({kPrefix - 1, 0}));
  EXPECT_EQ(pool.Lookup({0, 0}), prefix.front());
}

// The pool's invariants are checked in every build (core/check.h), not only with asserts on.
TEST(BlockPool, BrokenInvariantsThrowNamingTheCheck) {
  EXPECT_THROW(BlockPool(0), std::logic_error);
  BlockPool pool(4);
  std::vector<BlockId> got;
  ASSERT_TRUE(pool.Allocate(1, got));
  pool.Free(got.front());
  try {
    pool.Free(got.front());  // a second free of the same reference
    FAIL() << "a double free was accepted";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("block_pool.cc:"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("invariant failed: Live(block)"), std::string::npos)
        << e.what();
  }
  std::vector<BlockId> shared;
  ASSERT_TRUE(pool.Allocate(1, shared));
  pool.Touch(shared[0]);  // two references
  pool.Free(shared[0]);
  pool.Free(shared[0]);
  EXPECT_THROW(pool.Free(shared[0]), std::logic_error);  // a third free of two references
  EXPECT_THROW(pool.Touch(3), std::logic_error);         // free and uncached: no state
  EXPECT_THROW((void)pool.IsFree(4), std::logic_error);
  EXPECT_THROW((void)pool.IsCached(-1), std::logic_error);
}

}  // namespace
}  // namespace fleetsim
