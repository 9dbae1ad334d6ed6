// Request: token counts and the prefix hash of each block (engine/request.h).
#include "engine/request.h"

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace fleetsim {
namespace {

Request Make(int64_t id, int64_t prompt, std::vector<BlockHash> hashes = {}) {
  Request request;
  request.id = id;
  request.prompt_tokens = prompt;
  request.prompt_block_hashes = std::move(hashes);
  return request;
}

TEST(Request, TokensCountOutputsAndPrefillEndsAtTheSequenceLength) {
  Request r = Make(1, 10);
  EXPECT_EQ(r.num_tokens(), 10);
  EXPECT_FALSE(r.prefill_done());
  r.num_computed = 9;
  EXPECT_FALSE(r.prefill_done());
  r.num_computed = 10;
  EXPECT_TRUE(r.prefill_done());
  r.num_output = 1;  // the first output token still has to be fed back
  EXPECT_EQ(r.num_tokens(), 11);
  EXPECT_FALSE(r.prefill_done());
  r.num_computed = 11;
  EXPECT_TRUE(r.prefill_done());
}

TEST(Request, PromptBlocksTakeTheirGivenHashes) {
  const Request r = Make(1, 40, {7, 8, 9});
  EXPECT_EQ(r.BlockHashAt(0), 7u);
  EXPECT_EQ(r.BlockHashAt(1), 8u);
  EXPECT_EQ(r.BlockHashAt(2), 9u);
  // Two requests with the same prompt share its block hashes, whatever their ids.
  const Request other = Make(2, 40, {7, 8, 9});
  for (int64_t i = 0; i < 3; ++i)
    EXPECT_EQ(r.BlockHashAt(i), other.BlockHashAt(i));
}

TEST(Request, BlocksPastTheGivenHashesAreUniqueToTheRequestAndStable) {
  const Request a = Make(1, 40, {7, 8});
  const Request b = Make(2, 40, {7, 8});
  std::set<BlockHash> seen{7, 8};
  for (int64_t i = 2; i < 50; ++i) {
    EXPECT_NE(a.BlockHashAt(i), b.BlockHashAt(i)) << i;  // identical prompts, other ids
    EXPECT_TRUE(seen.insert(a.BlockHashAt(i)).second) << i;
    EXPECT_TRUE(seen.insert(b.BlockHashAt(i)).second) << i;
    EXPECT_EQ(a.BlockHashAt(i), a.BlockHashAt(i));  // the same on every call
  }
  // The same id gives the same tail hashes: a preempted request hits its own blocks.
  const Request again = Make(1, 40);
  for (int64_t i = 2; i < 10; ++i)
    EXPECT_EQ(again.BlockHashAt(i), a.BlockHashAt(i)) << i;
  // A request without prompt hashes has unique hashes from block 0.
  EXPECT_NE(Make(3, 40).BlockHashAt(0), Make(4, 40).BlockHashAt(0));
}

// Request's own allocation keeps its cache-line alignment; ASan (scripts/sanitize.sh)
// checks that each block goes back whole to malloc.
TEST(Request, HeapRequestsStartOnACacheLine) {
  std::vector<std::unique_ptr<Request>> requests;
  for (int i = 0; i < 100; ++i) {
    requests.push_back(std::make_unique<Request>());
    requests.back()->name = std::string(static_cast<std::size_t>(i) * 7, 'x');
    requests.back()->prompt_block_hashes.assign(static_cast<std::size_t>(i), BlockHash{7});
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(requests.back().get()) % alignof(Request), 0u);
  }
  static_assert(alignof(Request) == 64);
  // Freed in a different order than allocated.
  for (std::size_t i = 0; i < requests.size(); i += 2)
    requests[i].reset();
  requests.clear();
  auto* raw = new Request;
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(raw) % 64, 0u);
  delete raw;
}

}  // namespace
}  // namespace fleetsim
