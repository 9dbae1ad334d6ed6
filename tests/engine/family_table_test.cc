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

}  // namespace
}  // namespace fleetsim
