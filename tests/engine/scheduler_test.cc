// The scheduler scenarios of ENGINE_SEMANTICS.md sections 4-5, worked by hand.
#include "engine/scheduler.h"

#include <random>

#include <gtest/gtest.h>

#include "engine/engine_harness.h"

namespace fleetsim {
namespace {

using testing::Dense;
using testing::EngineHarness;
using testing::HybridAlign;
using Chunks = std::vector<std::string>;

TEST(AlignedChunk, FloorsToBlocksStopsOnTheLastBoundaryKeepsTheTail) {
  // 10,000-token prompt at block 784: last boundary 9,408.
  EXPECT_EQ(AlignedChunk(10000, 10000, 0, 2048, 784), 1568);
  EXPECT_EQ(AlignedChunk(10000, 10000, 0, 8192, 784), 7840);
  EXPECT_EQ(AlignedChunk(10000, 10000, 7840, 2160, 784), 1568);  // cut to end on 9,408
  EXPECT_EQ(AlignedChunk(10000, 10000, 9408, 592, 784), 592);    // the final tail
  EXPECT_EQ(AlignedChunk(10000, 10000, 0, 500, 784), 0);         // floored to nothing
  EXPECT_EQ(AlignedChunk(10000, 10001, 10000, 1, 784), 1);       // decode: never cut
  EXPECT_EQ(AlignedChunk(700, 700, 0, 300, 784), 300);           // all tail, no boundary
}

TEST(Scheduler, TenThousandTokenPromptAtBudget2048) {
  EngineHarness engine("qwen3.8-27b", HybridAlign(2048), 400);
  engine.Add("r", 10000, 2);
  const auto steps = engine.RunToIdle();
  const std::vector<Chunks> expected{{"r:1568@0"},    {"r:1568@1568"}, {"r:1568@3136"},
                                     {"r:1568@4704"}, {"r:1568@6272"}, {"r:1568@7840"},
                                     {"r:592@9408"},  {"r:1@10000"}};
  EXPECT_EQ(steps, expected);
}

TEST(Scheduler, TenThousandTokenPromptAtBudget8192) {
  EngineHarness engine("qwen3.8-27b", HybridAlign(8192), 400);
  engine.Add("r", 10000, 1);
  const std::vector<Chunks> expected{{"r:7840@0"}, {"r:1568@7840"}, {"r:592@9408"}};
  EXPECT_EQ(engine.RunToIdle(), expected);
}

TEST(Scheduler, WaitingRequestFlooredToZeroEndsAdmission) {
  EngineHarness engine("qwen3.8-27b", HybridAlign(2048), 400);
  engine.Add("a", 10000, 1);
  engine.Add("b", 5000, 1);  // 480 tokens left: floored to 0
  engine.Add("c", 100, 1);   // would fit, but admission has ended for this step
  const StepPlan plan = engine.Step();
  EXPECT_EQ(EngineHarness::Chunks(plan), (Chunks{"a:1568@0"}));
  ASSERT_EQ(engine.scheduler().waiting().size(), 2u);
  EXPECT_EQ(engine.scheduler().waiting().front()->name, "b");
}

// Prefill/decode disaggregation as vLLM's KV connector runs it (docs/DISAGGREGATION.md).
// A decode instance admits a request whose prompt a prefill instance computed with blocks
// for the whole prompt, all but its last token counted computed (scheduler.py
// _update_waiting_for_remote_kv): one 1-token chunk samples the first token, then decodes.
TEST(Scheduler, ARemotePrefilledRequestRunsOnlyItsLastPromptToken) {
  // Dense, block 16, 19 usable blocks: a 100-token prompt holds ceil(100 / 16) = 7.
  EngineHarness engine("llama-3.1-8b", Dense(false), 20);
  Request* d = engine.Make("d", 100, 3);
  d->remote_prefilled = true;
  engine.scheduler().Add(d);
  EXPECT_EQ(EngineHarness::Chunks(engine.Step()), (Chunks{"d:1@99"}));
  EXPECT_EQ(d->num_output, 1);
  EXPECT_EQ(engine.kv().num_free_blocks(), 19 - 7);
  EXPECT_EQ(engine.RunToIdle(), (std::vector<Chunks>{{"d:1@100"}, {"d:1@101"}}));
  EXPECT_EQ(d->state, RequestState::kFinished);
  EXPECT_EQ(engine.kv().num_free_blocks(), 19);
}

// Preempted on the decode instance, it recomputes its whole sequence there, as vLLM does
// (the remote KV is gone with its blocks).
TEST(Scheduler, APreemptedRemotePrefilledRequestRecomputesEverything) {
  Request request;
  request.prompt_tokens = 100;
  request.remote_prefilled = true;
  EXPECT_EQ(ComputedAtAdmission(request, 32), 99);
  request.num_preemptions = 1;
  EXPECT_EQ(ComputedAtAdmission(request, 32), 32);
  request.remote_prefilled = false;
  request.num_preemptions = 0;
  EXPECT_EQ(ComputedAtAdmission(request, 32), 32);
}

// A prefill instance's request (max_tokens = 1) finishes with its first token and keeps
// its blocks (vLLM's delay_free_blocks) until the instance frees them once sent.
TEST(Scheduler, APrefillInstancesRequestKeepsItsBlocksWhenItFinishes) {
  EngineHarness engine("llama-3.1-8b", Dense(false), 20);
  Request* p = engine.Make("p", 100, 1);
  p->remote_decode = true;
  engine.scheduler().Add(p);
  EXPECT_EQ(EngineHarness::Chunks(engine.Step()), (Chunks{"p:100@0"}));
  ASSERT_EQ(engine.finished().size(), 1u);
  EXPECT_EQ(p->state, RequestState::kFinished);
  EXPECT_TRUE(engine.scheduler().idle());
  EXPECT_EQ(engine.kv().num_free_blocks(), 19 - 7);
  engine.kv().Free(*p);
  EXPECT_EQ(engine.kv().num_free_blocks(), 19);
}

TEST(Scheduler, PreemptsTheLastRunningRequestWhichResumesByRecompute) {
  // Dense, prefix caching off, block 16, 5 usable blocks: two 32-token prompts take 4.
  EngineHarness engine("llama-3.1-8b", Dense(false), 6);
  Request* a = engine.Add("a", 32, 20);
  Request* b = engine.Add("b", 32, 3);
  EXPECT_EQ(EngineHarness::Chunks(engine.Step()), (Chunks{"a:32@0", "b:32@0"}));
  // Both need a third block for token 33; one is free: a takes it, b preempts itself.
  const StepPlan second = engine.Step();
  EXPECT_EQ(EngineHarness::Chunks(second), (Chunks{"a:1@32"}));
  ASSERT_EQ(second.preempted.size(), 1u);
  EXPECT_EQ(second.preempted[0], b);
  EXPECT_EQ(b->num_computed, 0);
  EXPECT_EQ(b->num_output, 1);  // the token it made is kept
  EXPECT_EQ(engine.scheduler().waiting().front(), b);

  const auto rest = engine.RunToIdle();
  // b comes back once a is done, recomputing its prompt and its one output token.
  bool resumed = false;
  for (const Chunks& step : rest) {
    for (const std::string& chunk : step)
      resumed = resumed || chunk == "b:33@0";
  }
  EXPECT_TRUE(resumed);
  EXPECT_EQ(a->num_output, 20);
  EXPECT_EQ(b->num_output, 3);
  EXPECT_EQ(a->num_preemptions, 0);
  EXPECT_EQ(b->num_preemptions, 1);
  EXPECT_EQ(engine.kv().num_free_blocks(), 5);
}

TEST(Scheduler, HybridHitsLandOnCheckpointsAtMultiplesOfTheBlock) {
  EngineHarness engine("qwen3.8-27b", HybridAlign(2048), 400);
  // 3,000 tokens run as 1568, 784 (ending on 2,352), 648: checkpoints at blocks 1 and 2,
  // none at block 0 (no chunk ended at 784).
  engine.Add("a", 3000, 1, {1, 2, 3});
  engine.RunToIdle();
  Request* same = engine.Add("same", 3000, 1, {1, 2, 3});
  Request* two = engine.Add("two", 3000, 1, {1, 2, 99});
  Request* one = engine.Add("one", 3000, 1, {1, 50, 51});
  EXPECT_EQ(engine.kv().FindLongestHit(*same).tokens, 3 * 784);
  EXPECT_EQ(engine.kv().FindLongestHit(*two).tokens, 2 * 784);
  // The attention block matches, but there is no GDN checkpoint at 784: no hit.
  EXPECT_EQ(engine.kv().FindLongestHit(*one).tokens, 0);
  const StepPlan plan = engine.Step();
  ASSERT_FALSE(plan.chunks.empty());
  EXPECT_EQ(plan.chunks[0].cached_tokens, 2352);
  EXPECT_EQ(EngineHarness::Chunks(plan)[0], "same:648@2352");
}

TEST(Scheduler, AHybridCheckpointIsNotHitInTheStepThatWritesIt) {
  EngineHarness engine("qwen3.8-27b", HybridAlign(8192), 400);
  engine.Add("x", 1600, 1, {5, 6});
  engine.Add("y", 1600, 1, {5, 6});
  const StepPlan plan = engine.Step();
  // y's attention blocks are hashed by x's allocation, but x's GDN checkpoint exists only
  // once the step completes: y computes its prompt itself.
  EXPECT_EQ(EngineHarness::Chunks(plan), (Chunks{"x:1568@0", "y:1568@0"}));
  Request* z = engine.Add("z", 1600, 1, {5, 6});
  EXPECT_EQ(engine.kv().FindLongestHit(*z).tokens, 1568);
}

TEST(Scheduler, DensePrefixCachingHitsWholeBlocksOnly) {
  EngineHarness engine("llama-3.1-8b", Dense(true), 100);
  engine.Add("a", 40, 1, {1, 2});  // two full blocks of 16, then 8 tokens
  engine.RunToIdle();
  Request* same = engine.Add("same", 40, 1, {1, 2});
  EXPECT_EQ(engine.kv().FindLongestHit(*same).tokens, 32);
  // Capped at num_tokens - 1: a 32-token prompt may reuse only its first block.
  Request* exact = engine.Add("exact", 32, 1, {1, 2});
  EXPECT_EQ(engine.kv().FindLongestHit(*exact).tokens, 16);
  // Dense blocks are hit in the same step that fills them, as vLLM does.
  EngineHarness fresh("llama-3.1-8b", Dense(true), 100);
  fresh.Add("p", 40, 1, {7, 8});
  fresh.Add("q", 40, 1, {7, 8});
  EXPECT_EQ(EngineHarness::Chunks(fresh.Step()), (Chunks{"p:40@0", "q:8@32"}));
}

TEST(Scheduler, RejectsRequestsThatCouldNeverRun) {
  EngineHarness engine("llama-3.1-8b", Dense(false), 11);  // 10 blocks = 160 tokens
  Request* too_long = engine.Make("long", 8192, 1);
  EXPECT_EQ(engine.scheduler().Add(too_long), RejectReason::kPromptTooLong);
  Request* too_big = engine.Make("big", 150, 20);  // 170 tokens at its longest
  EXPECT_EQ(engine.scheduler().Add(too_big), RejectReason::kExceedsKvCache);
  EXPECT_EQ(too_big->state, RequestState::kRejected);
  Request* fits = engine.Make("fits", 150, 10);
  EXPECT_EQ(engine.scheduler().Add(fits), RejectReason::kNone);
  EXPECT_TRUE(engine.scheduler().waiting().size() == 1);
}

// Random workloads on tight pools: every request ends exactly once, finished with all its
// tokens, and every block comes back.
void CheckEveryRequestEndsOnce(const std::string& model, testing::EngineHarness& engine,
                               std::mt19937& rng, int64_t max_prompt) {
  const int count = 40;
  std::vector<Request*> added;
  for (int i = 0; i < count; ++i) {
    const int64_t prompt = 1 + static_cast<int64_t>(rng() % static_cast<uint64_t>(max_prompt));
    std::vector<BlockHash> hashes;
    const int64_t full = prompt / engine.layout().block_size;
    const BlockHash family = rng() % 3;  // shared prefixes among a few families
    for (int64_t b = 0; b < full; ++b)
      hashes.push_back(family * 1000 + static_cast<BlockHash>(b) + 1);
    Request* r =
        engine.Make("r" + std::to_string(i), prompt, 1 + static_cast<int64_t>(rng() % 40), hashes);
    if (engine.scheduler().Add(r) == RejectReason::kNone) added.push_back(r);
  }
  engine.RunToIdle();
  std::map<const Request*, int> ends;
  for (const Request* r : engine.finished())
    ++ends[r];
  for (const Request* r : added) {
    EXPECT_EQ(ends[r], 1) << model << " " << r->name;
    EXPECT_EQ(r->state, RequestState::kFinished);
    EXPECT_EQ(r->num_output, r->max_output_tokens);
  }
  for (const auto& r : engine.requests()) {
    EXPECT_TRUE(r->state == RequestState::kFinished || r->state == RequestState::kRejected);
  }
  EXPECT_EQ(engine.kv().num_free_blocks(), engine.kv().num_usable_blocks());
}

TEST(Scheduler, EveryRequestEndsInExactlyOneTerminalState) {
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    std::mt19937 rng(seed);
    EngineHarness dense("llama-3.1-8b", Dense(seed % 2 == 0, 512), 40);
    CheckEveryRequestEndsOnce("dense", dense, rng, 400);
    EngineHarness hybrid("qwen3.8-27b", HybridAlign(2048), 40);
    CheckEveryRequestEndsOnce("hybrid", hybrid, rng, 6000);
  }
}

}  // namespace
}  // namespace fleetsim
