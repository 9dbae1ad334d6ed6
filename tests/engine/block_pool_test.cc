#include "engine/block_pool.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace fleetsim
