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
  index.Sweep([](CacheKey key, BlockId) { return key.group == 1; });
  EXPECT_EQ(index.Find({1, 0}), kNullBlock);
  EXPECT_EQ(index.Find({1, 1}), b);
  EXPECT_EQ(index.size(), 1u);
}

// Random inserts, replacements, erasures and entries going stale against
// std::unordered_map, through the table's doublings and sweeps that shrink it, at loads up
// to one half, so that probe runs form and wrap around the table's end (an erasure must
// close its gap without cutting another key's run).
TEST(PrefixIndex, AgreesWithAnUnorderedMap) {
  for (uint64_t seed : {1u, 2u, 3u}) {
    SCOPED_TRACE(seed);
    std::mt19937_64 rng(seed);
    PrefixIndex index;
    Keys keys;
    std::unordered_map<CacheKey, BlockId, KeyHasher> reference;
    std::vector<CacheKey> present;
    std::unordered_map<CacheKey, BlockId, KeyHasher> stale;  // entries the index may keep
    auto keep = [&](CacheKey key, BlockId block) {
      if (reference.count(key)) {
        EXPECT_EQ(reference.at(key), block);
        return true;
      }
      EXPECT_EQ(stale.at(key), block);
      stale.erase(key);
      return false;
    };
    for (int step = 0; step < 200000; ++step) {
      const uint64_t op = rng() % 10;
      if (op < 5 || present.empty()) {
        const CacheKey key{rng() % 5000, static_cast<int32_t>(rng() % 3)};
        if (reference.count(key)) continue;
        const BlockId block = keys.Add(key);
        if (stale.count(key)) {  // the caller reuses a stale entry
          index.Replace(key, block);
          stale.erase(key);
        } else {
          index.Insert(key, block);
        }
        reference[key] = block;
        present.push_back(key);
      } else if (op < 7) {
        const std::size_t at = rng() % present.size();
        const CacheKey key = present[at];
        const BlockId block = keys.Add(key);  // another block with the same key
        index.Replace(key, block);
        reference[key] = block;
      } else {  // the key's block goes: its entry is erased, or stays until a sweep
        const std::size_t at = rng() % present.size();
        const CacheKey key = present[at];
        if (op == 9) {
          index.Erase(key);
        } else {
          stale[key] = reference.at(key);
        }
        reference.erase(key);
        present[at] = present.back();
        present.pop_back();
      }
      if (step % 4999 == 4998) index.Sweep(keep);  // stale entries go only here
      ASSERT_EQ(index.size(), reference.size() + stale.size());
      ASSERT_LE(2 * index.size(), index.bytes() / 16);
      if (step % 997 == 0) {
        for (uint64_t h = 0; h < 5000; h += 7) {
          const CacheKey probe{h, static_cast<int32_t>(h % 3)};
          const auto found = reference.find(probe);
          const auto gone = stale.find(probe);
          const BlockId want = found != reference.end() ? found->second
                               : gone != stale.end()    ? gone->second
                                                        : kNullBlock;
          ASSERT_EQ(index.Find(probe), want) << "step " << step << " hash " << h;
        }
      }
    }
    for (const auto& [key, block] : reference)
      ASSERT_EQ(index.Find(key), block);
    // A last sweep leaves exactly the live keys.
    index.Sweep(keep);
    EXPECT_TRUE(stale.empty());
    EXPECT_EQ(index.size(), reference.size());
    for (const auto& [key, block] : reference)
      ASSERT_EQ(index.Find(key), block);
  }
}

// The table follows what it holds: between a quarter and an eighth full after a sweep,
// never more than half, and nothing once no entry is kept.
TEST(PrefixIndex, MemoryFollowsTheKeysHeld) {
  PrefixIndex index;
  EXPECT_EQ(index.bytes(), 0u);
  for (BlockId b = 1; b <= 10'000; ++b)
    index.Insert({static_cast<BlockHash>(b) * 7919, 0}, b);
  EXPECT_GE(index.bytes(), 2u * 10'000 * 16);
  EXPECT_LE(index.bytes(), 8u * 10'000 * 16);
  index.Sweep([](CacheKey, BlockId b) { return b > 9'990; });
  EXPECT_EQ(index.size(), 10u);
  EXPECT_LE(index.bytes(), 64u * 16);  // ten keys: the smallest table
  for (BlockId b = 1; b <= 10'000; ++b)
    EXPECT_EQ(index.Find({static_cast<BlockHash>(b) * 7919, 0}), b > 9'990 ? b : kNullBlock);
  // Erasing every key shrinks nothing until a sweep sizes the table for what is left.
  for (BlockId b = 9'991; b <= 10'000; ++b)
    index.Erase({static_cast<BlockHash>(b) * 7919, 0});
  EXPECT_EQ(index.size(), 0u);
  EXPECT_EQ(index.Find({9'991u * 7919, 0}), kNullBlock);
  index.Erase({12345, 0});  // absent: nothing happens
  EXPECT_EQ(index.size(), 0u);
  index.Insert({7, 0}, 20'000);
  EXPECT_EQ(index.Find({7, 0}), 20'000);
  index.Sweep([](CacheKey, BlockId) { return false; });
  EXPECT_EQ(index.bytes(), 0u);
  EXPECT_EQ(index.Find({7919, 0}), kNullBlock);
}

}  // namespace
}  // namespace fleetsim
