// One instance in time: fast decode (stretches of pure-decode steps advanced in bulk)
// must give exactly the results of stepping one by one.
#include "engine/instance.h"

#include <algorithm>
#include <random>
#include <stdexcept>

#include <gtest/gtest.h>

#include "engine/engine_setup.h"
#include "engine/test_models.h"
#include "perf/synthetic_bundle.h"

namespace fleetsim {
namespace {

using testing::Card;
using testing::SettingErrorFor;

struct Outcome {
  std::vector<RequestRecord> records;
  std::vector<StepRecord> steps;
  int64_t fast_steps = 0;
};

int Preemptions(const Outcome& outcome) {
  int total = 0;
  for (const RequestRecord& r : outcome.records)
    total += r.preemptions;
  return total;
}

Outcome Simulate(const EngineSetup& setup, uint32_t seed, bool fast) {
  std::unique_ptr<Instance> instance = setup.MakeInstance();
  instance->SetFastDecode(fast);
  Outcome outcome;
  instance->OnStep([&](const StepRecord& s) { outcome.steps.push_back(s); });
  std::mt19937 rng(seed);
  SimTime t = 0;
  const int64_t block = setup.layout.block_size;
  for (int i = 0; i < 60; ++i) {
    t += static_cast<SimTime>(rng() % 20'000'000);  // up to 20 ms apart: they overlap
    auto r = std::make_unique<Request>();
    r->id = i;
    r->name = "r" + std::to_string(i);
    r->prompt_tokens = 1 + static_cast<int64_t>(rng() % (4 * static_cast<uint32_t>(block)));
    r->max_output_tokens = 1 + static_cast<int64_t>(rng() % 600);
    const BlockHash family = rng() % 4;
    for (int64_t b = 0; b < r->prompt_tokens / block; ++b) {
      r->prompt_block_hashes.push_back(family * 100 + static_cast<BlockHash>(b) + 1);
    }
    instance->RunUntil(t);
    instance->Arrive(std::move(r), t);
  }
  instance->RunUntil(kNever);
  outcome.records = instance->records();
  std::sort(outcome.records.begin(), outcome.records.end(),
            [](const RequestRecord& a, const RequestRecord& b) { return a.id < b.id; });
  outcome.fast_steps = instance->fast_decode_steps();
  return outcome;
}

void ExpectIdentical(const Outcome& slow, const Outcome& fast) {
  ASSERT_EQ(slow.records.size(), fast.records.size());
  for (std::size_t i = 0; i < slow.records.size(); ++i) {
    const RequestRecord& a = slow.records[i];
    const RequestRecord& b = fast.records[i];
    SCOPED_TRACE(a.name);
    EXPECT_EQ(a.first_scheduled, b.first_scheduled);
    EXPECT_EQ(a.first_token, b.first_token);
    EXPECT_EQ(a.finish, b.finish);
    EXPECT_EQ(a.output_tokens, b.output_tokens);
    EXPECT_EQ(a.cached_tokens, b.cached_tokens);
    EXPECT_EQ(a.preemptions, b.preemptions);
    EXPECT_EQ(a.state, b.state);
  }
  ASSERT_EQ(slow.steps.size(), fast.steps.size());
  for (std::size_t i = 0; i < slow.steps.size(); ++i) {
    SCOPED_TRACE("step " + std::to_string(i));
    EXPECT_EQ(slow.steps[i].start, fast.steps[i].start);
    EXPECT_EQ(slow.steps[i].duration, fast.steps[i].duration);
    EXPECT_EQ(slow.steps[i].decodes, fast.steps[i].decodes);
    EXPECT_DOUBLE_EQ(slow.steps[i].decode_context_mean, fast.steps[i].decode_context_mean);
    EXPECT_EQ(slow.steps[i].decode_context_max, fast.steps[i].decode_context_max);
    EXPECT_EQ(slow.steps[i].prefill_tokens, fast.steps[i].prefill_tokens);
    EXPECT_EQ(slow.steps[i].running, fast.steps[i].running);
    EXPECT_DOUBLE_EQ(slow.steps[i].kv_usage, fast.steps[i].kv_usage);
  }
}

EngineSetup MakeSetup(const std::string& model, const std::string& bundle_dir, bool prefix_caching,
                      int64_t blocks) {
  EngineConfig config;
  config.enable_prefix_caching = prefix_caching;
  config.max_num_batched_tokens = 8192;
  config.max_model_len = 32768;
  KvBudget budget;
  budget.num_blocks = blocks;
  return BuildEngineSetup(Card(model), LoadBundle(bundle_dir), config, budget, 0, SettingErrorFor);
}

TEST(Instance, FastDecodeEqualsSteppingOneByOneDense) {
  testing::SyntheticBundle bundle;
  testing::WriteDenseBundle(bundle);
  for (bool prefix : {false, true}) {
    // A tight pool (preemptions) and a roomy one.
    for (int64_t blocks : {80, 5000}) {
      const EngineSetup setup = MakeSetup("llama-3.1-8b", bundle.dir(), prefix, blocks);
      for (uint32_t seed : {1u, 2u, 3u}) {
        SCOPED_TRACE("prefix " + std::to_string(prefix) + " blocks " + std::to_string(blocks) +
                     " seed " + std::to_string(seed));
        const Outcome slow = Simulate(setup, seed, false);
        const Outcome fast = Simulate(setup, seed, true);
        EXPECT_EQ(slow.fast_steps, 0);
        EXPECT_GT(fast.fast_steps, 0);
        if (blocks == 80) {
          EXPECT_GT(Preemptions(slow), 0);  // the tight pool really is tight
        }
        ExpectIdentical(slow, fast);
      }
    }
  }
}

TEST(Instance, FastDecodeEqualsSteppingOneByOneHybrid) {
  testing::SyntheticBundle bundle;
  testing::WriteHybridBundle(bundle, {1});
  for (bool prefix : {false, true}) {
    for (int64_t blocks : {40, 2000}) {
      const EngineSetup setup = MakeSetup("qwen3.8-27b", bundle.dir(), prefix, blocks);
      for (uint32_t seed : {4u, 5u}) {
        SCOPED_TRACE("prefix " + std::to_string(prefix) + " blocks " + std::to_string(blocks) +
                     " seed " + std::to_string(seed));
        const Outcome slow = Simulate(setup, seed, false);
        const Outcome fast = Simulate(setup, seed, true);
        EXPECT_GT(fast.fast_steps, 0);
        if (blocks == 40) {
          EXPECT_GT(Preemptions(slow), 0);
        }
        ExpectIdentical(slow, fast);
      }
    }
  }
}

TEST(Instance, EveryArrivalEndsOnceAndPreemptionsHappenOnATightPool) {
  testing::SyntheticBundle bundle;
  testing::WriteDenseBundle(bundle);
  const Outcome outcome = Simulate(MakeSetup("llama-3.1-8b", bundle.dir(), true, 80), 7, true);
  ASSERT_EQ(outcome.records.size(), 60u);
  for (const RequestRecord& r : outcome.records) {
    EXPECT_TRUE(r.state == RequestState::kFinished || r.state == RequestState::kRejected) << r.name;
    if (r.state == RequestState::kFinished) {
      EXPECT_GE(r.finish, r.first_token);
      EXPECT_GE(r.first_token, r.arrival);
    }
  }
  EXPECT_GT(Preemptions(outcome), 0);
}

// Arrivals out of time order are a bug of the caller (the fleet delivers in order): they throw.
TEST(Instance, AnArrivalBeforeThePreviousOneThrows) {
  testing::SyntheticBundle bundle;
  testing::WriteDenseBundle(bundle);
  const EngineSetup setup = MakeSetup("llama-3.1-8b", bundle.dir(), false, 80);
  std::unique_ptr<Instance> instance = setup.MakeInstance();
  auto request = [](int64_t id) {
    auto r = std::make_unique<Request>();
    r->id = id;
    r->name = "r" + std::to_string(id);
    r->prompt_tokens = 4;
    r->max_output_tokens = 1;
    return r;
  };
  instance->Arrive(request(0), 2'000);
  EXPECT_THROW(instance->Arrive(request(1), 1'000), std::logic_error);
}

}  // namespace
}  // namespace fleetsim
