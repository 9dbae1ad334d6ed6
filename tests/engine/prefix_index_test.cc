#include "engine/prefix_index.h"

#include <random>
#include <unordered_map>
#include <vector>

#include <gtest/gtest.h>

#include "core/hash64.h"

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
  // A present key keeps its block: the insert says which, and changes nothing.
  EXPECT_EQ(index.Insert({1, 0}, 99), a);
  EXPECT_EQ(index.Find({1, 0}), a);
  EXPECT_EQ(index.size(), 2u);
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

// Runs of consecutive blocks as a generated workload hashes them (workload_gen::BlockHashOf:
// a run of 16 shares all but the low 4 bits), cached in order and evicted tail first as
// the pool does, many runs interleaved, against std::unordered_map: the runs' adjacent homes
// make long probe runs, through which lookups, Robin Hood placement and backward shifts
// must keep every key findable.
TEST(PrefixIndex, RunsOfBlocksStayFindable) {
  const auto key_of = [](uint64_t family, std::size_t j) {
    const uint64_t i = j;
    return CacheKey{(Mix64(family ^ (i >> 4)) & ~uint64_t{15}) | (i & 15), 0};
  };
  struct Run {
    uint64_t family = 0;
    std::size_t cached = 0;  // blocks 0 .. cached - 1 are in the index
    std::size_t length = 0;  // blocks it ever had
  };
  std::mt19937_64 rng(7);
  PrefixIndex index;
  Keys keys;
  std::unordered_map<CacheKey, BlockId, KeyHasher> reference;
  std::vector<Run> runs;
  for (int step = 0; step < 4000; ++step) {
    if (rng() % 2 == 0 || runs.empty()) {
      Run run{rng(), 1 + rng() % 60, 0};
      run.length = run.cached;
      for (std::size_t j = 0; j < run.cached; ++j) {
        const CacheKey key = key_of(run.family, j);
        const BlockId block = keys.Add(key);
        index.Insert(key, block);
        reference[key] = block;
      }
      runs.push_back(run);
    } else {  // evicted from its end, as a request's blocks are
      Run& run = runs[rng() % runs.size()];
      for (std::size_t n = 1 + rng() % 20; n > 0 && run.cached > 0; --n) {
        const CacheKey key = key_of(run.family, --run.cached);
        index.Erase(key);
        reference.erase(key);
      }
    }
    ASSERT_EQ(index.size(), reference.size());
    if (step % 97 == 0) {
      for (const auto& [key, block] : reference)
        ASSERT_EQ(index.Find(key), block) << "step " << step;
      for (const Run& run : runs) {
        for (std::size_t j = run.cached; j < run.length + 2; ++j)  // erased, or never there
          ASSERT_EQ(index.Find(key_of(run.family, j)), kNullBlock) << "step " << step;
      }
    }
  }
}

// SplitMix64's finalizer undone, so that a test can pick keys by where they land.
uint64_t Unmix64(uint64_t x) {
  const auto unshift = [](uint64_t y, int s) {  // undoes y = v ^ (v >> s)
    uint64_t v = y;
    for (int i = 0; i < 64 / s + 1; ++i)
      v = y ^ (v >> s);
    return v;
  };
  const auto inverse = [](uint64_t a) {  // modulo 2^64, by Newton's iteration
    uint64_t v = a;
    for (int i = 0; i < 6; ++i)
      v *= 2 - a * v;
    return v;
  };
  x = unshift(x, 31);
  x *= inverse(0x94D049BB133111EBULL);
  x = unshift(x, 27);
  x *= inverse(0xBF58476D1CE4E5B9ULL);
  return unshift(x, 30);
}

// More keys with one home than a slot's 16-bit distance can count: the far ones are
// measured from their homes instead, and lookups and erasures still find every key. (A
// trace's hashes are the workload's to choose; none may break the index.)
TEST(PrefixIndex, KeysFartherThanADistanceCanSayAreFound) {
  ASSERT_EQ(Mix64(Unmix64(0x1234'5678'9abc'def0ULL)), 0x1234'5678'9abc'def0ULL);
  std::vector<CacheKey> crowd;
  for (uint64_t i = 1; crowd.size() < 65'600; ++i) {
    const uint64_t run = Unmix64(i << 40);  // home 0 in any table of up to 2^40 slots
    if (run >> 60 == 0) crowd.push_back({run << 4, 0});
  }
  PrefixIndex index;
  for (std::size_t k = 0; k < crowd.size(); ++k)
    index.Insert(crowd[k], static_cast<BlockId>(k + 1));
  for (std::size_t k = 0; k < crowd.size(); k += 101)
    ASSERT_EQ(index.Find(crowd[k]), static_cast<BlockId>(k + 1)) << k;
  EXPECT_EQ(index.Find({crowd.back().hash + (uint64_t{1} << 20), 0}), kNullBlock);
  // Each erasure near the front shifts the whole crowd back by one.
  for (std::size_t k = 0; k < crowd.size(); k += 1'311)
    index.Erase(crowd[k]);
  EXPECT_EQ(index.size(), crowd.size() - 51);
  for (std::size_t k = 0; k < crowd.size(); k += 101)
    ASSERT_EQ(index.Find(crowd[k]), k % 1'311 == 0 ? kNullBlock : static_cast<BlockId>(k + 1)) << k;
}

// The table grows fourfold, so a grown table is between an eighth and a half full of slots;
// erasing shrinks nothing, and a clear gives the memory back. Keys a quad apart take a
// slot each; a quad's four keys share one.
TEST(PrefixIndex, MemoryFollowsTheKeysHeld) {
  constexpr std::size_t kSlot = PrefixIndex::kSlotBytes;
  PrefixIndex index;
  EXPECT_EQ(index.bytes(), 0u);
  for (BlockId b = 1; b <= 10'000; ++b) {
    index.Insert({static_cast<BlockHash>(b) * 7919, 0}, b);
    if (b > 32) {  // past the first 64-slot table
      ASSERT_GE(index.bytes(), 2u * index.size() * kSlot) << b;
      ASSERT_LE(index.bytes(), 8u * index.size() * kSlot) << b;
    }
  }
  EXPECT_EQ(index.bytes(), 65'536u * kSlot);  // 10,000 keys: 2^16 slots, 15 % full
  for (BlockId b = 1; b <= 9'990; ++b)
    index.Erase({static_cast<BlockHash>(b) * 7919, 0});
  EXPECT_EQ(index.size(), 10u);
  EXPECT_EQ(index.bytes(), 65'536u * kSlot);
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
  EXPECT_EQ(index.bytes(), 64u * kSlot);

  // 40,000 keys in runs of 16 fill 10,000 slots, as 10,000 scattered keys do.
  PrefixIndex runs;
  for (uint64_t i = 0; i < 40'000; ++i)
    runs.Insert({(Mix64(i >> 4) & ~uint64_t{15}) | (i & 15), 0}, static_cast<BlockId>(i + 1));
  EXPECT_EQ(runs.bytes(), 65'536u * kSlot);
  for (uint64_t i = 0; i < 40'000; i += 7)
    ASSERT_EQ(runs.Find({(Mix64(i >> 4) & ~uint64_t{15}) | (i & 15), 0}),
              static_cast<BlockId>(i + 1));
  // A key whose quad has a slot, itself absent, is found absent; erasing it changes nothing.
  const CacheKey stranger{(Mix64(40'000 >> 4) & ~uint64_t{15}) | 1, 1};
  EXPECT_EQ(runs.Find(stranger), kNullBlock);
  runs.Erase(stranger);
  EXPECT_EQ(runs.size(), 40'000u);
}

}  // namespace
}  // namespace fleetsim
