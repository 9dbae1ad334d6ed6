// KvCacheManager on small hand-made layouts (block 4), where every block count follows
// from the header's rules by hand: attention groups hold cdiv(tokens, block) blocks; a GDN
// group holds 1 + spec blocks in mode "none", and in mode "align" the block being written
// plus the last checkpoint; prefix hits are whole cached blocks capped at tokens - 1.
// One test runs the real 27B layout (block 784) through a scheduler-free chunked prefill.
#include "engine/kv_cache_manager.h"

#include <algorithm>
#include <vector>

#include <gtest/gtest.h>

#include "engine/test_models.h"

namespace fleetsim {
namespace {

constexpr int kBlock = 4;

KvCacheLayout DenseLayout() {
  KvCacheLayout layout;
  layout.block_size = kBlock;
  layout.groups = {{LayerType::kFullAttention, {0, 1}}};
  return layout;
}

// Two GDN groups, then one attention group (vLLM's order for a model whose layer 0 is GDN).
KvCacheLayout HybridLayout(MambaCacheMode mode, int num_spec = 0) {
  KvCacheLayout layout;
  layout.block_size = kBlock;
  layout.groups = {{LayerType::kLinearAttention, {0}},
                   {LayerType::kLinearAttention, {1}},
                   {LayerType::kFullAttention, {2}}};
  layout.mamba_mode = mode;
  layout.num_spec = num_spec;
  return layout;
}
constexpr std::size_t kAttentionGroup = 2;

Request MakeRequest(int64_t id, int64_t prompt, std::vector<BlockHash> hashes = {}) {
  Request request;
  request.id = id;
  request.prompt_tokens = prompt;
  request.max_output_tokens = 100;
  request.prompt_block_hashes = std::move(hashes);
  return request;
}

// Allocates `tokens` more and marks them computed, as a step would; then commits the step.
void RunChunk(KvCacheManager& kv, Request& request, int64_t tokens, const PrefixHit& hit = {}) {
  ASSERT_TRUE(kv.Allocate(request, tokens, hit, false));
  request.num_computed = std::max(request.num_computed, hit.tokens) + tokens;
  kv.CommitStep(request);
}

int64_t RealBlocks(const std::vector<BlockId>& blocks) {
  return std::count_if(blocks.begin(), blocks.end(), [](BlockId b) { return b != kNullBlock; });
}

TEST(KvCacheManager, AllocatesCeilTokensOverBlockAndFreesEverything) {
  KvCacheManager kv(DenseLayout(), 11, false);  // block 0 is the null block: 10 usable
  EXPECT_EQ(kv.num_usable_blocks(), 10);
  EXPECT_EQ(kv.num_free_blocks(), 10);
  Request r = MakeRequest(1, 10);
  ASSERT_TRUE(kv.Allocate(r, 10, {}, false));
  ASSERT_EQ(r.blocks.size(), 1u);
  EXPECT_EQ(r.blocks[0].size(), 3u);  // cdiv(10, 4)
  // Without prefix caching no content is ever cached: the blocks are held anonymously,
  // as a count in the pool without per-block state.
  EXPECT_EQ(std::count(r.blocks[0].begin(), r.blocks[0].end(), kAnonymousBlock), 3);
  EXPECT_EQ(kv.pool().live_blocks(), 0);
  EXPECT_EQ(kv.num_free_blocks(), 7);
  EXPECT_DOUBLE_EQ(kv.Usage(), 0.3);

  // Decoding: token 11 and 12 fit the third block; token 13 needs a fourth.
  r.num_computed = 10;
  r.num_output = 2;
  ASSERT_TRUE(kv.Allocate(r, 2, {}, false));
  EXPECT_EQ(kv.num_free_blocks(), 7);
  r.num_computed = 12;
  r.num_output = 3;
  ASSERT_TRUE(kv.Allocate(r, 1, {}, false));
  EXPECT_EQ(r.blocks[0].size(), 4u);
  EXPECT_EQ(kv.num_free_blocks(), 6);

  kv.Free(r);
  EXPECT_EQ(kv.num_free_blocks(), 10);
  EXPECT_TRUE(r.blocks.empty());
  EXPECT_DOUBLE_EQ(kv.Usage(), 0.0);
}

TEST(KvCacheManager, AShortPoolRefusesAndChangesNothing) {
  KvCacheManager kv(DenseLayout(), 4, false);  // 3 usable
  Request r = MakeRequest(1, 13);              // cdiv(13, 4) = 4 blocks
  EXPECT_FALSE(kv.Allocate(r, 13, {}, false));
  EXPECT_EQ(kv.num_free_blocks(), 3);
  for (std::size_t g = 0; g < r.blocks.size(); ++g)
    EXPECT_TRUE(r.blocks[g].empty());
  ASSERT_TRUE(kv.Allocate(r, 12, {}, false));  // exactly the three
  EXPECT_EQ(kv.num_free_blocks(), 0);
}

TEST(KvCacheManager, FullSequenceMustFitChecksTheWholeSequenceButAllocatesTheChunk) {
  Request r = MakeRequest(1, 20);                 // 5 blocks in all
  KvCacheManager small(DenseLayout(), 5, false);  // 4 usable
  EXPECT_FALSE(small.Allocate(r, 4, {}, true));
  EXPECT_EQ(small.num_free_blocks(), 4);
  ASSERT_TRUE(small.Allocate(r, 4, {}, false));  // the chunk alone fits
  EXPECT_EQ(small.num_free_blocks(), 3);

  Request s = MakeRequest(2, 20);
  KvCacheManager big(DenseLayout(), 6, false);  // 5 usable: the whole sequence fits
  ASSERT_TRUE(big.Allocate(s, 4, {}, true));
  EXPECT_EQ(s.blocks[0].size(), 1u);  // but only the chunk's block is taken
  EXPECT_EQ(big.num_free_blocks(), 4);
}

TEST(KvCacheManager, PrefixHitsAreWholeCachedBlocksCappedBelowTheLastToken) {
  KvCacheManager kv(DenseLayout(), 11, true);
  Request a = MakeRequest(1, 12, {101, 102, 103});
  RunChunk(kv, a, 12);
  EXPECT_EQ(a.num_hashed_blocks, 3);

  Request longer = MakeRequest(2, 14, {101, 102, 103});
  const PrefixHit hit = kv.FindLongestHit(longer);
  EXPECT_EQ(hit.tokens, 12);
  ASSERT_EQ(hit.blocks.size(), 1u);
  EXPECT_EQ(hit.blocks[0], a.blocks[0]);

  // The same 12 tokens: the last token must be computed, so 11 tokens -> 2 whole blocks.
  EXPECT_EQ(kv.FindLongestHit(MakeRequest(3, 12, {101, 102, 103})).tokens, 8);
  // The hit stops at the first block that differs, whatever follows.
  EXPECT_EQ(kv.FindLongestHit(MakeRequest(4, 14, {101, 999, 103})).tokens, 4);
  EXPECT_EQ(kv.FindLongestHit(MakeRequest(5, 14, {999, 102, 103})).tokens, 0);

  // Without prefix caching nothing is ever hit.
  KvCacheManager off(DenseLayout(), 11, false);
  Request b = MakeRequest(1, 12, {101, 102, 103});
  RunChunk(off, b, 12);
  EXPECT_EQ(off.FindLongestHit(longer).tokens, 0);
}

TEST(KvCacheManager, AHitOnHeldBlocksSharesThemAndCostsOnlyTheTail) {
  KvCacheManager kv(DenseLayout(), 11, true);
  Request a = MakeRequest(1, 12, {101, 102, 103});
  RunChunk(kv, a, 12);
  EXPECT_EQ(kv.num_free_blocks(), 7);

  Request b = MakeRequest(2, 14, {101, 102, 103});
  const PrefixHit hit = kv.FindLongestHit(b);
  ASSERT_EQ(hit.tokens, 12);
  ASSERT_TRUE(kv.Allocate(b, 2, hit, false));  // tokens 13-14: one fresh block
  EXPECT_EQ(kv.num_free_blocks(), 6);
  ASSERT_EQ(b.blocks[0].size(), 4u);
  EXPECT_TRUE(std::equal(a.blocks[0].begin(), a.blocks[0].end(), b.blocks[0].begin()));

  kv.Free(a);  // b still holds the shared three: nothing comes back
  EXPECT_EQ(kv.num_free_blocks(), 6);
  kv.Free(b);
  EXPECT_EQ(kv.num_free_blocks(), 10);
}

TEST(KvCacheManager, AHitOnFreedBlocksCostsThemAsFreeBlocks) {
  KvCacheManager kv(DenseLayout(), 5, true);  // 4 usable
  Request a = MakeRequest(1, 12, {101, 102, 103});
  RunChunk(kv, a, 12);
  kv.Free(a);
  EXPECT_EQ(kv.num_free_blocks(), 4);  // cached, but free

  Request b = MakeRequest(2, 14, {101, 102, 103});
  const PrefixHit hit = kv.FindLongestHit(b);
  ASSERT_EQ(hit.tokens, 12);
  // Three hit blocks leave the free queue and one is fresh: all four.
  ASSERT_TRUE(kv.Allocate(b, 2, hit, false));
  EXPECT_EQ(kv.num_free_blocks(), 0);
  kv.Free(b);

  // With one usable block fewer the same admission does not fit.
  KvCacheManager tight(DenseLayout(), 4, true);  // 3 usable
  Request c = MakeRequest(1, 12, {101, 102, 103});
  RunChunk(tight, c, 12);
  tight.Free(c);
  Request d = MakeRequest(2, 14, {101, 102, 103});
  const PrefixHit tight_hit = tight.FindLongestHit(d);
  ASSERT_EQ(tight_hit.tokens, 12);
  EXPECT_FALSE(tight.Allocate(d, 2, tight_hit, false));
  EXPECT_EQ(tight.num_free_blocks(), 3);
}

TEST(KvCacheManager, FreedRequestsLoseTheirLastBlocksToEvictionFirst) {
  KvCacheManager kv(DenseLayout(), 11, true);  // 10 usable
  Request a = MakeRequest(1, 12, {101, 102, 103});
  RunChunk(kv, a, 12);
  kv.Free(a);  // queue: 7 never-used blocks, then a's blocks last first

  // Eight blocks: the seven never used, then the first freed -- a's last block.
  Request big = MakeRequest(2, 32);
  RunChunk(kv, big, 32);
  EXPECT_EQ(kv.num_free_blocks(), 2);
  EXPECT_EQ(kv.FindLongestHit(MakeRequest(3, 14, {101, 102, 103})).tokens, 8);

  // Taking the rest evicts the whole prefix.
  Request more = MakeRequest(4, 8);
  RunChunk(kv, more, 8);
  EXPECT_EQ(kv.num_free_blocks(), 0);
  EXPECT_EQ(kv.FindLongestHit(MakeRequest(5, 14, {101, 102, 103})).tokens, 0);
}

TEST(KvCacheManager, APreemptedRequestFreesAllAndHitsItsOwnBlocksWhenItResumes) {
  KvCacheManager kv(DenseLayout(), 11, true);
  Request r = MakeRequest(7, 8);  // no prompt hashes: its blocks get hashes of its own
  RunChunk(kv, r, 8);
  r.num_output = 1;
  ASSERT_TRUE(kv.Allocate(r, 1, {}, false));
  EXPECT_EQ(kv.num_free_blocks(), 7);

  // Until a preemption, blocks past the prompt's hashes are in no index: only this request
  // has their hashes, and it looks them up only when it runs again.
  EXPECT_EQ(kv.pool().cached_keys(), 0);

  // Preemption: every block back, the request's bookkeeping reset.
  kv.Preempt(r);
  r.num_computed = 0;
  EXPECT_EQ(kv.pool().cached_keys(), 2);
  EXPECT_EQ(kv.num_free_blocks(), 10);
  EXPECT_TRUE(r.blocks.empty());
  EXPECT_EQ(r.num_hashed_blocks, 0);
  EXPECT_EQ(r.gdn_scan_from, 0);

  // Resuming (9 tokens now), it hits its two full blocks; another request never does.
  EXPECT_EQ(kv.FindLongestHit(r).tokens, 8);
  Request other = MakeRequest(8, 8);
  other.num_output = 1;
  EXPECT_EQ(kv.FindLongestHit(other).tokens, 0);

  // Resumed, it hits them, and its new blocks are indexed as they are hashed (it could be
  // preempted again).
  const PrefixHit hit = kv.FindLongestHit(r);
  ASSERT_TRUE(kv.Allocate(r, 1, hit, true));
  r.num_computed = 9;
  r.num_output = 8;  // 16 tokens: block 3 is full
  ASSERT_TRUE(kv.Allocate(r, 7, {}, false));
  EXPECT_EQ(kv.pool().cached_keys(), 4);
}

// A request that ends without a preemption leaves its own blocks anonymous: free, in the
// queue's order, without state or index entries.
TEST(KvCacheManager, AFinishedRequestsOwnBlocksLeaveNoState) {
  KvCacheManager kv(DenseLayout(), 11, true);
  Request shared = MakeRequest(1, 12, {101, 102});  // two shared blocks, then its own
  RunChunk(kv, shared, 12);
  EXPECT_EQ(kv.pool().cached_keys(), 2);
  EXPECT_EQ(kv.pool().live_blocks(), 2);  // its own block is held anonymously
  EXPECT_EQ(shared.blocks[0][2], kAnonymousBlock);
  kv.Free(shared);
  EXPECT_EQ(kv.pool().live_blocks(), 2);  // the two shared ones stay cached
  EXPECT_EQ(kv.num_free_blocks(), 10);
  EXPECT_EQ(kv.FindLongestHit(MakeRequest(2, 14, {101, 102, 103})).tokens, 8);
}

// Prompt hashes past the shared ones (shared_hash_limit: no other request produces them)
// are looked up but cost no index work until a preemption; every hit and free count is
// what indexing them all gives, preemption included.
TEST(KvCacheManager, HashesPastTheSharedOnesEnterTheIndexOnlyOnPreemption) {
  KvCacheManager lazy(DenseLayout(), 21, true);
  KvCacheManager eager(DenseLayout(), 21, true);
  for (KvCacheManager* kv : {&lazy, &eager}) {
    Request earlier = MakeRequest(1, 9, {101, 102});  // an earlier turn: two blocks
    RunChunk(*kv, earlier, 9);
    kv->Free(earlier);
  }
  Request last = MakeRequest(2, 17, {101, 102, 103, 104});  // the last turn
  last.shared_hash_limit = 2;
  Request same = MakeRequest(2, 17, {101, 102, 103, 104});
  const PrefixHit hit = lazy.FindLongestHit(last);
  EXPECT_EQ(hit.tokens, 8);
  EXPECT_EQ(eager.FindLongestHit(same).tokens, 8);
  RunChunk(lazy, last, 9, hit);
  RunChunk(eager, same, 9, eager.FindLongestHit(same));
  EXPECT_EQ(lazy.num_free_blocks(), eager.num_free_blocks());
  EXPECT_EQ(lazy.pool().cached_keys(), 2);  // 103 and 104 held anonymously
  EXPECT_EQ(eager.pool().cached_keys(), 4);
  EXPECT_EQ(last.blocks[0][2], kAnonymousBlock);

  // Preempted, its blocks are named with their own hashes, and it hits them as it would.
  lazy.Preempt(last);
  eager.Preempt(same);
  last.num_computed = same.num_computed = 0;
  EXPECT_EQ(lazy.pool().cached_keys(), 4);
  EXPECT_EQ(lazy.num_free_blocks(), eager.num_free_blocks());
  EXPECT_EQ(lazy.FindLongestHit(last).tokens, 16);
  EXPECT_EQ(eager.FindLongestHit(same).tokens, 16);
  EXPECT_EQ(lazy.pool().Lookup({103, 0}).has_value(), true);

  // A request that finishes unpreempted leaves them anonymous in the queue.
  Request again = MakeRequest(3, 17, {101, 102, 105, 106});
  again.shared_hash_limit = 2;
  RunChunk(lazy, again, 17, lazy.FindLongestHit(again));
  EXPECT_EQ(lazy.FindLongestHit(again).tokens, 8);
  lazy.Free(again);
  EXPECT_FALSE(lazy.pool().Lookup({105, 0}).has_value());
}

// A conversation's record keeps no hashes: the turn that comes back names its blocks. An
// earlier turn, back after a second preemption, is shorter than the record a later turn
// left: it names none of it, and the record waits for a longer turn, which then hits
// every block it would have hit had they all been cached as they were hashed.
TEST(KvCacheManager, ARecordPastAShortTurnWaitsForALongerOne) {
  KvCacheManager lazy(DenseLayout(), 41, true);
  KvCacheManager eager(DenseLayout(), 41, true);
  // Turn `blocks` of conversation 7: a 3-block system prompt, then the conversation's own.
  const auto turn = [](int64_t id, int64_t blocks, bool family) {
    std::vector<BlockHash> hashes;
    for (int64_t b = 0; b < blocks; ++b)
      hashes.push_back(b < 3 ? 100 + static_cast<BlockHash>(b) : 700 + static_cast<BlockHash>(b));
    Request r = MakeRequest(id, blocks * kBlock, std::move(hashes));
    if (family) {
      r.family = 7;
      r.family_hash_start = 3;
    }
    return r;
  };
  // Admits `r` as the scheduler does (PrepareLookup, then the lookup), computing `tokens`
  // more; returns the hit.
  const auto admit = [](KvCacheManager& kv, Request& r, int64_t tokens) {
    kv.PrepareLookup(r);
    const PrefixHit hit = kv.FindLongestHit(r);
    RunChunk(kv, r, tokens - hit.tokens, hit);
    return hit.tokens;
  };
  const auto preempt = [](KvCacheManager& kv, Request& r) {
    kv.Preempt(r);
    r.num_computed = 0;
  };
  Request a_lazy = turn(1, 5, true);
  Request a_eager = turn(1, 5, false);
  Request b_lazy = turn(2, 9, true);
  Request b_eager = turn(2, 9, false);
  Request c_lazy = turn(3, 12, true);
  Request c_eager = turn(3, 12, false);
  const auto expect_same = [&](const char* when) {
    SCOPED_TRACE(when);
    EXPECT_EQ(lazy.num_free_blocks(), eager.num_free_blocks());
    for (BlockHash h = 700; h < 712; ++h)
      EXPECT_EQ(lazy.pool().Lookup({h, 0}).has_value(), eager.pool().Lookup({h, 0}).has_value());
  };

  // A runs, is preempted (its blocks are indexed from then on) and runs again.
  for (auto [kv, a] : {std::pair{&lazy, &a_lazy}, std::pair{&eager, &a_eager}}) {
    admit(*kv, *a, 20);
    a->num_output = 1;
    ASSERT_TRUE(kv->Allocate(*a, 1, {}, false));
    preempt(*kv, *a);
    EXPECT_EQ(admit(*kv, *a, 21), 20);
  }
  // B hits A's prompt and holds the rest of its own lazily; it finishes first.
  EXPECT_EQ(admit(lazy, b_lazy, 36), 20);
  EXPECT_EQ(admit(eager, b_eager, 36), 20);
  EXPECT_EQ(b_lazy.blocks[0][5], kAnonymousBlock);
  lazy.Free(b_lazy);
  eager.Free(b_eager);
  EXPECT_EQ(lazy.family_records(), 1);  // B's positions 5-8, anonymous in the queue
  EXPECT_FALSE(lazy.pool().Lookup({705, 0}).has_value());

  // A is preempted again and comes back: B's record lies wholly past A's hashes.
  preempt(lazy, a_lazy);
  preempt(eager, a_eager);
  EXPECT_EQ(admit(lazy, a_lazy, 21), 20);
  EXPECT_EQ(admit(eager, a_eager, 21), 20);
  EXPECT_EQ(lazy.family_short_lookups(), 1);
  EXPECT_EQ(lazy.family_records(), 1);  // still waiting
  EXPECT_EQ(lazy.num_free_blocks(), eager.num_free_blocks());

  // C, longer than B, names B's blocks with its own hashes and hits them all.
  EXPECT_EQ(admit(lazy, c_lazy, 48), 36);
  EXPECT_EQ(admit(eager, c_eager, 48), 36);
  EXPECT_EQ(lazy.family_records(), 0);
  expect_same("after C's admission");

  // Evicting through the whole queue takes the same blocks in the same order.
  for (auto* kv : {&lazy, &eager}) {
    kv->Free(kv == &lazy ? a_lazy : a_eager);
    kv->Free(kv == &lazy ? c_lazy : c_eager);
  }
  for (int64_t round = 0; round < 40; ++round) {
    Request filler_lazy = MakeRequest(100 + round, kBlock);
    Request filler_eager = MakeRequest(100 + round, kBlock);
    RunChunk(lazy, filler_lazy, kBlock);
    RunChunk(eager, filler_eager, kBlock);
    expect_same("evicting");
    if (::testing::Test::HasFailure()) return;
  }
}

TEST(KvCacheManager, ModeNoneHoldsOneStateBlockPerGdnGroupWhateverTheLength) {
  KvCacheManager kv(HybridLayout(MambaCacheMode::kNone), 21, false);  // 20 usable
  Request r = MakeRequest(1, 10);
  RunChunk(kv, r, 4);  // attention 1, each GDN group 1
  EXPECT_EQ(kv.num_free_blocks(), 17);
  RunChunk(kv, r, 6);  // attention up to cdiv(10, 4) = 3, GDN unchanged
  EXPECT_EQ(kv.num_free_blocks(), 15);
  EXPECT_EQ(r.blocks[0].size(), 1u);
  EXPECT_EQ(r.blocks[1].size(), 1u);
  EXPECT_EQ(r.blocks[kAttentionGroup].size(), 3u);
  kv.Free(r);
  EXPECT_EQ(kv.num_free_blocks(), 20);

  // Speculative tokens add one state block each per GDN group.
  KvCacheManager spec(HybridLayout(MambaCacheMode::kNone, 1), 21, false);
  Request s = MakeRequest(1, 10);
  RunChunk(spec, s, 10);
  EXPECT_EQ(s.blocks[0].size(), 2u);
  EXPECT_EQ(spec.num_free_blocks(), 20 - 3 - 2 * 2);
}

TEST(KvCacheManager, AlignModeKeepsTheWrittenBlockAndTheLastCheckpoint) {
  KvCacheManager kv(HybridLayout(MambaCacheMode::kAlign), 21, true);  // 20 usable
  Request r = MakeRequest(1, 20, {11, 12, 13, 14, 15});
  RunChunk(kv, r, 4);  // positions: attention 1, GDN position 0
  EXPECT_EQ(kv.num_free_blocks(), 17);
  RunChunk(kv, r, 4);  // attention 2; GDN position 1 (position 0 is the checkpoint)
  EXPECT_EQ(kv.num_free_blocks(), 14);
  EXPECT_EQ(RealBlocks(r.blocks[0]), 2);

  // The next chunk first frees the state before the current one (position 0), then
  // writes position 2: each GDN group holds positions 1 and 2.
  RunChunk(kv, r, 2);
  EXPECT_EQ(kv.num_free_blocks(), 14 + 2 - 3);
  for (std::size_t g : {0u, 1u}) {
    SCOPED_TRACE(g);
    ASSERT_EQ(r.blocks[g].size(), 3u);
    EXPECT_EQ(r.blocks[g][0], kNullBlock);
    EXPECT_NE(r.blocks[g][1], kNullBlock);
    EXPECT_NE(r.blocks[g][2], kNullBlock);
  }
  EXPECT_EQ(r.blocks[kAttentionGroup].size(), 3u);

  // Once the step has computed 10 tokens the state is at position 2, so releasing
  // skipped states frees the checkpoint at position 1 (keeping its hash); again, nothing.
  kv.ReleaseSkippedStates(r);
  EXPECT_EQ(kv.num_free_blocks(), 15);
  EXPECT_EQ(r.blocks[0][1], kNullBlock);
  kv.ReleaseSkippedStates(r);
  EXPECT_EQ(kv.num_free_blocks(), 15);

  // A chunk spanning several blocks (10 -> 20 tokens: state at position 4) leaves a null
  // position between the old state and the new one, and takes one block per GDN group.
  RunChunk(kv, r, 10);
  EXPECT_EQ(kv.num_free_blocks(), 15 - 2 - 2);  // attention cdiv(20, 4) = 5
  for (std::size_t g : {0u, 1u}) {
    SCOPED_TRACE(g);
    ASSERT_EQ(r.blocks[g].size(), 5u);
    EXPECT_NE(r.blocks[g][2], kNullBlock);
    EXPECT_EQ(r.blocks[g][3], kNullBlock);
    EXPECT_NE(r.blocks[g][4], kNullBlock);
  }
  kv.ReleaseSkippedStates(r);  // position 2 goes, across the null at 3
  EXPECT_EQ(RealBlocks(r.blocks[0]), 1);
  EXPECT_EQ(kv.num_free_blocks(), 13);
  kv.Free(r);
  EXPECT_EQ(kv.num_free_blocks(), 20);
}

TEST(KvCacheManager, SpeculativeAlignWritesOnePlusSpecBlocksPerNewPosition) {
  KvCacheManager kv(HybridLayout(MambaCacheMode::kAlign, 2), 41, true);  // 40 usable
  Request r = MakeRequest(1, 12);
  RunChunk(kv, r, 4);
  EXPECT_EQ(kv.num_free_blocks(), 40 - 1 - 2 * 3);
  EXPECT_EQ(r.blocks[0].size(), 3u);
}

TEST(KvCacheManager, HybridHitsNeedACommittedCheckpointInEveryGdnGroup) {
  KvCacheManager kv(HybridLayout(MambaCacheMode::kAlign), 21, true);
  Request a = MakeRequest(1, 10, {11, 12});
  ASSERT_TRUE(kv.Allocate(a, 4, {}, false));
  a.num_computed = 4;
  // The attention block is hashed at allocation, but the GDN checkpoint only when its
  // step completes: until then nothing can be hit.
  Request b = MakeRequest(2, 10, {11, 12});
  EXPECT_EQ(kv.FindLongestHit(b).tokens, 0);
  kv.CommitStep(a);
  const PrefixHit one = kv.FindLongestHit(b);
  EXPECT_EQ(one.tokens, 4);
  ASSERT_EQ(one.blocks.size(), 3u);
  EXPECT_EQ(one.blocks[0], (std::vector<BlockId>{a.blocks[0][0]}));
  EXPECT_EQ(one.blocks[1], (std::vector<BlockId>{a.blocks[1][0]}));
  EXPECT_EQ(one.blocks[kAttentionGroup], (std::vector<BlockId>{a.blocks[kAttentionGroup][0]}));

  // a goes on to 10 tokens in one chunk: no checkpoint at 8 tokens (position 1), so the
  // hit is trimmed back from the two cached attention blocks to the checkpoint at 4.
  RunChunk(kv, a, 6);
  const PrefixHit trimmed = kv.FindLongestHit(b);
  EXPECT_EQ(trimmed.tokens, 4);
  EXPECT_EQ(trimmed.blocks[kAttentionGroup].size(), 1u);
}

TEST(KvCacheManager, AHybridHitReusesTheCheckpointAndTheAttentionBlocks) {
  KvCacheManager kv(HybridLayout(MambaCacheMode::kAlign), 21, true);  // 20 usable
  Request a = MakeRequest(1, 10, {11, 12});
  RunChunk(kv, a, 4);
  RunChunk(kv, a, 4);  // checkpoint at 8 tokens
  RunChunk(kv, a, 2);
  EXPECT_EQ(kv.num_free_blocks(), 13);

  Request b = MakeRequest(2, 10, {11, 12});
  const PrefixHit hit = kv.FindLongestHit(b);
  ASSERT_EQ(hit.tokens, 8);
  EXPECT_EQ(hit.blocks[kAttentionGroup],
            (std::vector<BlockId>{a.blocks[kAttentionGroup][0], a.blocks[kAttentionGroup][1]}));
  EXPECT_EQ(hit.blocks[0], (std::vector<BlockId>{a.blocks[0][1]}));
  // b computes tokens 9-10: a third attention block and, per GDN group, the block for
  // position 2 beside the hit checkpoint at position 1 (held, so no extra cost).
  ASSERT_TRUE(kv.Allocate(b, 2, hit, false));
  EXPECT_EQ(kv.num_free_blocks(), 13 - 3);
  ASSERT_EQ(b.blocks[0].size(), 3u);
  EXPECT_EQ(b.blocks[0][0], kNullBlock);
  EXPECT_EQ(b.blocks[0][1], a.blocks[0][1]);
  kv.Free(a);
  kv.Free(b);
  EXPECT_EQ(kv.num_free_blocks(), 20);
}

// The 27B hybrid as shipped (block 784, three GDN groups and one attention group): after
// two block-sized chunks a request holds 6 pool blocks of GDN state (the header of
// kv_cache_layout.h) and cdiv(1568, 784) = 2 attention blocks.
TEST(KvCacheManager, Real27BLayoutHoldsSixStateBlocksInAlignMode) {
  const ModelCard& card = testing::Card("qwen3.8-27b");
  EngineConfig config;
  config.enable_prefix_caching = true;
  const KvCacheLayout layout =
      ResolveKvCacheLayout(card, testing::Resolve(card, config), testing::SettingErrorFor);
  ASSERT_EQ(layout.block_size, 784);
  KvCacheManager kv(layout, 101, true);
  Request r = MakeRequest(1, 3000);
  RunChunk(kv, r, 784);
  EXPECT_EQ(kv.num_free_blocks(), 100 - 1 - 3);
  RunChunk(kv, r, 784);
  EXPECT_EQ(kv.num_free_blocks(), 100 - 2 - 6);
  EXPECT_EQ(100 - kv.num_free_blocks() - 2, layout.StateBlocksPerRequest(MambaCacheMode::kAlign));
}

}  // namespace
}  // namespace fleetsim
