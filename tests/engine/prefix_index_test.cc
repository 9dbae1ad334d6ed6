#include "engine/prefix_index.h"

#include <random>
#include <unordered_map>
#include <vector>

#include <gtest/gtest.h>

namespace fleetsim {
namespace {

struct KeyHasher {
  std::size_t operator()(const CacheKey& key) const {
    return static_cast<std::size_t>(key.hash) ^ static_cast<std::size_t>(key.group);
  }
};

// A new block id per key added, from 1 (0 is the null block).
class Keys {
 public:
  BlockId Add(CacheKey key) {
    keys_.push_back(key);
    return static_cast<BlockId>(keys_.size());  // ids from 1: 0 is the null block
  }

 private:
  std::vector<CacheKey> keys_;
};

TEST(PrefixIndex, FindsWhatWasInsertedAndNothingElse) {
  PrefixIndex index;
  Keys keys;
  EXPECT_EQ(index.Find({1, 0}), kNullBlock);  // empty table
  const BlockId a = keys.Add({1, 0});
  const BlockId b = keys.Add({1, 1});  // same hash, other group: another key
  index.Insert({1, 0}, a);
  index.Insert({1, 1}, b);
  EXPECT_EQ(index.Find({1, 0}), a);
  EXPECT_EQ(index.Find({1, 1}), b);
  EXPECT_EQ(index.Find({2, 0}), kNullBlock);
  index.Erase({1, 0});
  EXPECT_EQ(index.Find({1, 0}), kNullBlock);
  EXPECT_EQ(index.Find({1, 1}), b);
  EXPECT_EQ(index.size(), 1u);
}

// Random inserts, replacements and erasures against std::unordered_map, through the
// table's doublings and a clear now and then, at loads up to one half, so that probe runs
// form and wrap around the table's end (an erasure must close its gap without cutting
// another key's run).
TEST(PrefixIndex, AgreesWithAnUnorderedMap) {
  for (uint64_t seed : {1u, 2u, 3u}) {
    SCOPED_TRACE(seed);
    std::mt19937_64 rng(seed);
    PrefixIndex index;
    Keys keys;
    std::unordered_map<CacheKey, BlockId, KeyHasher> reference;
    std::vector<CacheKey> present;
    for (int step = 0; step < 200000; ++step) {
      const uint64_t op = rng() % 10;
      if (op < 5 || present.empty()) {
        const CacheKey key{rng() % 5000, static_cast<int32_t>(rng() % 3)};
        if (reference.count(key)) continue;
        const BlockId block = keys.Add(key);
        index.Insert(key, block);
        reference[key] = block;
        present.push_back(key);
      } else if (op < 7) {
        const std::size_t at = rng() % present.size();
        const CacheKey key = present[at];
        const BlockId block = keys.Add(key);  // another block with the same key
        index.Replace(key, block);
        reference[key] = block;
      } else {  // the key's block goes, and its entry with it
        const std::size_t at = rng() % present.size();
        index.Erase(present[at]);
        reference.erase(present[at]);
        present[at] = present.back();
        present.pop_back();
      }
      if (step % 49999 == 49998) {  // the pool emptied
        index.Clear();
        reference.clear();
        present.clear();
        ASSERT_EQ(index.bytes(), 0u);
      }
      ASSERT_EQ(index.size(), reference.size());
      ASSERT_LE(2 * index.size(), index.bytes() / 16);
      if (step % 997 == 0) {
        for (uint64_t h = 0; h < 5000; h += 7) {
          const CacheKey probe{h, static_cast<int32_t>(h % 3)};
          const auto found = reference.find(probe);
          const BlockId want = found != reference.end() ? found->second : kNullBlock;
          ASSERT_EQ(index.Find(probe), want) << "step " << step << " hash " << h;
        }
      }
    }
    for (const auto& [key, block] : reference)
      ASSERT_EQ(index.Find(key), block);
  }
}

// The table grows fourfold, so a grown table is between an eighth and a half full;
// erasing shrinks nothing, and a clear gives the memory back.
TEST(PrefixIndex, MemoryFollowsTheKeysHeld) {
  PrefixIndex index;
  EXPECT_EQ(index.bytes(), 0u);
  for (BlockId b = 1; b <= 10'000; ++b) {
    index.Insert({static_cast<BlockHash>(b) * 7919, 0}, b);
    if (b > 32) {  // past the first 64-slot table
      ASSERT_GE(index.bytes(), 2u * index.size() * 16) << b;
      ASSERT_LE(index.bytes(), 8u * index.size() * 16) << b;
    }
  }
  EXPECT_EQ(index.bytes(), 65'536u * 16);  // 10,000 keys: 2^16 slots, 15 % full
  for (BlockId b = 1; b <= 9'990; ++b)
    index.Erase({static_cast<BlockHash>(b) * 7919, 0});
  EXPECT_EQ(index.size(), 10u);
  EXPECT_EQ(index.bytes(), 65'536u * 16);
  for (BlockId b = 1; b <= 10'000; ++b)
    EXPECT_EQ(index.Find({static_cast<BlockHash>(b) * 7919, 0}), b > 9'990 ? b : kNullBlock);
  index.Erase({12345, 0});  // absent: nothing happens
  EXPECT_EQ(index.size(), 10u);
  index.Clear();
  EXPECT_EQ(index.size(), 0u);
  EXPECT_EQ(index.bytes(), 0u);
  EXPECT_EQ(index.Find({9'991u * 7919, 0}), kNullBlock);
  index.Insert({7, 0}, 20'000);
  EXPECT_EQ(index.Find({7, 0}), 20'000);
  EXPECT_EQ(index.bytes(), 64u * 16);
}

}  // namespace
}  // namespace fleetsim
