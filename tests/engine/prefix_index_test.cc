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

// Random inserts, replacements and erasures against std::unordered_map, through several
// doublings, at loads up to one half, so that probe runs form, wrap around the
// table's end and get shifted back on erasure.
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
      } else {
        const std::size_t at = rng() % present.size();
        const CacheKey key = present[at];
        index.Erase(key);
        reference.erase(key);
        present[at] = present.back();
        present.pop_back();
      }
      if (step % 997 == 0) {
        for (uint64_t h = 0; h < 5000; h += 7) {
          const CacheKey probe{h, static_cast<int32_t>(h % 3)};
          const auto found = reference.find(probe);
          ASSERT_EQ(index.Find(probe), found == reference.end() ? kNullBlock : found->second)
              << "step " << step << " hash " << h;
        }
      }
    }
    EXPECT_EQ(index.size(), reference.size());
    for (const auto& [key, block] : reference)
      ASSERT_EQ(index.Find(key), block);
  }
}

// The table follows what it holds: it grows past half full, shrinks below an eighth, and
// holds nothing once empty.
TEST(PrefixIndex, MemoryFollowsTheKeysHeld) {
  PrefixIndex index;
  EXPECT_EQ(index.bytes(), 0u);
  for (BlockId b = 1; b <= 10'000; ++b)
    index.Insert({static_cast<BlockHash>(b) * 7919, 0}, b);
  EXPECT_GE(index.bytes(), 2u * 10'000 * 16);
  EXPECT_LE(index.bytes(), 4u * 10'000 * 16);
  for (BlockId b = 1; b <= 9'990; ++b)
    index.Erase({static_cast<BlockHash>(b) * 7919, 0});
  EXPECT_LE(index.bytes(), 64u * 16);  // ten keys: the smallest table
  for (BlockId b = 9'991; b <= 10'000; ++b)
    EXPECT_EQ(index.Find({static_cast<BlockHash>(b) * 7919, 0}), b);
  for (BlockId b = 9'991; b <= 10'000; ++b)
    index.Erase({static_cast<BlockHash>(b) * 7919, 0});
  EXPECT_EQ(index.bytes(), 0u);
  EXPECT_EQ(index.Find({7919, 0}), kNullBlock);
}

}  // namespace
}  // namespace fleetsim
