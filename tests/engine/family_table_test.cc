// The KV cache manager's conversation table against std::unordered_map, through random
// inserts and erasures that wrap probe runs around the table's end and grow it.
#include "engine/family_table.h"

#include <random>
#include <unordered_map>

#include <gtest/gtest.h>

namespace fleetsim {
namespace {

TEST(FamilyTable, AgreesWithAMapThroughRandomInsertsAndErasures) {
  std::mt19937_64 rng(7);
  FamilyTable<int64_t> table;
  std::unordered_map<uint64_t, int64_t> expected;
  for (int op = 0; op < 200000; ++op) {
    // Few distinct keys, so that erasures hit and probe runs crowd.
    const uint64_t key = 1 + rng() % 300;
    if (rng() % 3 == 0) {
      table.Erase(key);
      expected.erase(key);
    } else {
      table.Insert(key) += 1;
      expected[key] += 1;
    }
    ASSERT_EQ(table.size(), expected.size());
    if (op % 1000 == 0) {
      for (uint64_t k = 1; k <= 300; ++k) {
        const auto it = expected.find(k);
        const int64_t* found = table.Find(k);
        ASSERT_EQ(found != nullptr, it != expected.end()) << k;
        if (found != nullptr) {
          ASSERT_EQ(*found, it->second) << k;
        }
      }
    }
  }
  table.Clear();
  EXPECT_EQ(table.size(), 0u);
  EXPECT_EQ(table.Find(1), nullptr);
}

// A table that filled and emptied gives its room back, and keeps every entry it holds.
TEST(FamilyTable, ShrinksWhenSparseKeepingItsEntries) {
  FamilyTable<int64_t> table;
  for (uint64_t k = 1; k <= 4000; ++k)
    table.Insert(k) = static_cast<int64_t>(k);
  const std::size_t full = table.bytes();
  table.ShrinkIfSparse();  // half full at most: nothing to give back
  EXPECT_EQ(table.bytes(), full);
  for (uint64_t k = 1; k <= 4000; ++k) {
    if (k % 100 != 0) table.Erase(k);
  }
  table.ShrinkIfSparse();
  EXPECT_LT(table.bytes(), full / 16);
  ASSERT_EQ(table.size(), 40u);
  for (uint64_t k = 1; k <= 4000; ++k) {
    const int64_t* found = table.Find(k);
    ASSERT_EQ(found != nullptr, k % 100 == 0) << k;
    if (found != nullptr) {
      EXPECT_EQ(*found, static_cast<int64_t>(k));
    }
  }
  for (uint64_t k = 100; k <= 4000; k += 100)
    table.Erase(k);
  table.ShrinkIfSparse();
  EXPECT_EQ(table.bytes(), 0u);
  table.Insert(5) = 5;  // and grows again from nothing
  EXPECT_EQ(*table.Find(5), 5);
}

}  // namespace
}  // namespace fleetsim
