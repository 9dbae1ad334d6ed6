// One instance in time: fast decode (stretches of pure-decode steps advanced in one move,
// across block boundaries) must give exactly the results of stepping one by one.
#include "engine/instance.h"

#include <algorithm>
#include <functional>
#include <random>
#include <stdexcept>

#include <gtest/gtest.h>

#include "engine/engine_setup.h"
#include "engine/test_models.h"
#include "perf/synthetic_bundle.h"

namespace fleetsim {
namespace {

struct Outcome {
  std::vector<RequestRecord> records;
  std::vector<StepRecord> steps;
  int64_t fast_steps = 0;
  int64_t fast_pool_steps = 0;
  // The instance's own token tally, and the same built from its step records.
  std::vector<TokenTally> tally, tally_of_steps;
};

// The interval of the token tallies: a few steps long, so that runs of steps cross it.
constexpr SimTime kTallyInterval = 3'000'000;

void ExpectSameTally(const std::vector<TokenTally>& a, const std::vector<TokenTally>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    SCOPED_TRACE("tally entry " + std::to_string(i));
    EXPECT_EQ(a[i].bucket, b[i].bucket);
    EXPECT_EQ(a[i].prompt_tokens, b[i].prompt_tokens);
    EXPECT_EQ(a[i].generated_tokens, b[i].generated_tokens);
  }
}

int Preemptions(const Outcome& outcome) {
  int total = 0;
  for (const RequestRecord& r : outcome.records)
    total += r.preemptions;
  return total;
}

struct Traffic {
  int requests = 60;
  int64_t max_output = 600;
  // > 0: RunUntil also at every multiple of this, as a fleet's windows cut a run.
  SimTime window = 0;
  // Every block's hash in the prefix-cache index from the start, as before blocks only
  // their own request can hit waited for its preemption: hits must not change.
  bool index_every_block = false;
  // Every request handed to the instance before it runs up to its arrival, as a fleet's
  // window delivers them: arrivals come from its pending queue in the middle of decode
  // runs (and of prompts split at block boundaries).
  bool arrive_ahead = false;
};

Outcome Simulate(const std::function<std::unique_ptr<Instance>()>& make, int64_t block,
                 uint32_t seed, bool fast, const Traffic& traffic = {}) {
  std::unique_ptr<Instance> instance = make();
  instance->SetFastDecode(fast);
  instance->RecordScheduledState(true);
  Outcome outcome;
  instance->OnStep([&](const StepRecord& s) {
    outcome.steps.push_back(s);
    AddTokens(outcome.tally_of_steps, (s.start + s.duration) / kTallyInterval, s.prefill_tokens,
              s.generated_tokens);
  });
  instance->TallyTokens(kTallyInterval, &outcome.tally);
  std::mt19937 rng(seed);
  SimTime t = 0;
  SimTime next_window = traffic.window;
  const auto run_until = [&](SimTime until) {
    for (; traffic.window > 0 && next_window < until; next_window += traffic.window)
      instance->RunUntil(next_window);
    instance->RunUntil(until);
  };
  for (int i = 0; i < traffic.requests; ++i) {
    t += static_cast<SimTime>(rng() % 20'000'000);  // up to 20 ms apart: they overlap
    auto r = std::make_unique<Request>();
    r->id = i;
    r->name = "r" + std::to_string(i);
    r->prompt_tokens = 1 + static_cast<int64_t>(rng() % (4 * static_cast<uint32_t>(block)));
    r->max_output_tokens =
        1 + static_cast<int64_t>(rng() % static_cast<uint32_t>(traffic.max_output));
    const BlockHash family = rng() % 4;
    for (int64_t b = 0; b < r->prompt_tokens / block; ++b) {
      r->prompt_block_hashes.push_back(family * 100 + static_cast<BlockHash>(b) + 1);
    }
    r->private_blocks_indexed = traffic.index_every_block;
    if (!traffic.arrive_ahead) run_until(t);
    instance->Arrive(std::move(r), t);
  }
  if (traffic.window > 0) {
    while (!instance->idle() && instance->NextEventTime() != kNever) {
      instance->RunUntil(next_window);
      next_window += traffic.window;
    }
  }
  instance->RunUntil(kNever);
  outcome.records = instance->records();
  std::sort(outcome.records.begin(), outcome.records.end(),
            [](const RequestRecord& a, const RequestRecord& b) { return a.id < b.id; });
  outcome.fast_steps = instance->fast_decode_steps();
  outcome.fast_pool_steps = instance->fast_decode_pool_steps();
  return outcome;
}

Outcome Simulate(const EngineSetup& setup, uint32_t seed, bool fast, const Traffic& traffic = {}) {
  return Simulate([&setup] { return setup.MakeInstance(); }, setup.layout.block_size, seed, fast,
                  traffic);
}

void ExpectIdentical(const Outcome& slow, const Outcome& fast) {
  // The tally an instance keeps is the one its step records give.
  ExpectSameTally(slow.tally, slow.tally_of_steps);
  ExpectSameTally(fast.tally, fast.tally_of_steps);
  ExpectSameTally(slow.tally, fast.tally);
  ASSERT_EQ(slow.records.size(), fast.records.size());
  for (std::size_t i = 0; i < slow.records.size(); ++i) {
    const RequestRecord& a = slow.records[i];
    const RequestRecord& b = fast.records[i];
    SCOPED_TRACE(a.name);
    EXPECT_EQ(a.queued, b.queued);
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
    EXPECT_EQ(slow.steps[i].waiting, fast.steps[i].waiting);
    EXPECT_EQ(slow.steps[i].generated_tokens, fast.steps[i].generated_tokens);
    EXPECT_EQ(slow.steps[i].preemptions, fast.steps[i].preemptions);
    EXPECT_DOUBLE_EQ(slow.steps[i].kv_usage, fast.steps[i].kv_usage);
    EXPECT_EQ(slow.steps[i].scheduled_running, fast.steps[i].scheduled_running);
    EXPECT_EQ(slow.steps[i].scheduled_waiting, fast.steps[i].scheduled_waiting);
    EXPECT_DOUBLE_EQ(slow.steps[i].scheduled_kv_usage, fast.steps[i].scheduled_kv_usage);
    if (::testing::Test::HasFailure()) return;  // the first step that differs is enough
  }
}

EngineSetup MakeSetup(const std::string& model, const std::string& bundle_dir, bool prefix_caching,
                      int64_t blocks, bool async_scheduling = true) {
  EngineConfig config;
  config.enable_prefix_caching = prefix_caching;
  config.async_scheduling = async_scheduling;
  config.max_num_batched_tokens = 8192;
  config.max_model_len = 32768;
  return testing::EngineWithBlocks(model, bundle_dir, config, blocks);
}

TEST(Instance, FastDecodeEqualsSteppingOneByOneDense) {
  testing::SyntheticBundle bundle;
  testing::WriteDenseBundle(bundle);
  for (bool async : {true, false})
    for (bool prefix : {false, true}) {
      // A tight pool (preemptions) and a roomy one.
      for (int64_t blocks : {80, 5000}) {
        const EngineSetup setup = MakeSetup("llama-3.1-8b", bundle.dir(), prefix, blocks, async);
        for (uint32_t seed : {1u, 2u, 3u}) {
          SCOPED_TRACE("async " + std::to_string(async) + " prefix " + std::to_string(prefix) +
                       " blocks " + std::to_string(blocks) + " seed " + std::to_string(seed));
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
  for (bool async : {true, false})
    for (bool prefix : {false, true}) {
      for (int64_t blocks : {40, 2000}) {
        const EngineSetup setup = MakeSetup("qwen3.8-27b", bundle.dir(), prefix, blocks, async);
        for (uint32_t seed : {4u, 5u}) {
          SCOPED_TRACE("async " + std::to_string(async) + " prefix " + std::to_string(prefix) +
                       " blocks " + std::to_string(blocks) + " seed " + std::to_string(seed));
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

// Layouts with small blocks, so that decodes cross block boundaries often: dense at block
// 1 and 16, and a hybrid (two GDN groups and an attention group, vLLM's order) at block 8
// in mamba "align" mode (GDN states released and checkpoints cached at boundaries, with
// and without a speculative slot) and in mode "none".
KvCacheLayout SmallLayout(bool hybrid, int block, MambaCacheMode mode, int num_spec) {
  KvCacheLayout layout;
  layout.block_size = block;
  layout.mamba_mode = mode;
  layout.num_spec = num_spec;
  if (hybrid) {
    layout.groups = {{LayerType::kLinearAttention, {0}},
                     {LayerType::kLinearAttention, {1}},
                     {LayerType::kFullAttention, {2}}};
  } else {
    layout.groups = {{LayerType::kFullAttention, {0, 1}}};
  }
  return layout;
}

// Decode stretches that cross block boundaries -- new blocks taken in bulk, prefix-cache
// hashing of preempted requests' own blocks, GDN releases and checkpoints -- and stop at a
// pool too short for the next step (a preemption), at every arrival and finish and at
// window ends, must leave exactly what stepping one by one leaves.
TEST(Instance, FastDecodeAcrossBlockBoundariesEqualsSteppingOneByOne) {
  testing::SyntheticBundle dense_bundle;
  testing::WriteDenseBundle(dense_bundle);
  testing::SyntheticBundle hybrid_bundle;
  testing::WriteHybridBundle(hybrid_bundle, {1});
  const EngineSetup dense = MakeSetup("llama-3.1-8b", dense_bundle.dir(), true, 1000);
  const EngineSetup hybrid = MakeSetup("qwen3.8-27b", hybrid_bundle.dir(), true, 1000);
  struct Case {
    const char* name;
    const EngineSetup* setup;  // the cost model and scheduler settings
    KvCacheLayout layout;
    int64_t tight_blocks;  // preempts; the roomy pool is ten times larger
  };
  const Case cases[] = {
      {"dense block 1", &dense, SmallLayout(false, 1, MambaCacheMode::kNone, 0), 700},
      {"dense block 16", &dense, SmallLayout(false, 16, MambaCacheMode::kNone, 0), 80},
      {"hybrid align block 8", &hybrid, SmallLayout(true, 8, MambaCacheMode::kAlign, 0), 160},
      {"hybrid align spec 1", &hybrid, SmallLayout(true, 8, MambaCacheMode::kAlign, 1), 170},
      {"hybrid none block 8", &hybrid, SmallLayout(true, 8, MambaCacheMode::kNone, 0), 140},
  };
  for (bool async : {true, false})
    for (const Case& c : cases) {
      SchedulerConfig scheduler = c.setup->scheduler;
      scheduler.async_scheduling = async;
      for (bool prefix : {false, true}) {
        for (int64_t blocks : {c.tight_blocks, 10 * c.tight_blocks}) {
          int preemptions = 0;
          for (SimTime window : {SimTime{0}, SimTime{3'000'000}}) {
            const auto make = [&] {
              return std::make_unique<Instance>(scheduler, c.layout, blocks, prefix,
                                                *c.setup->cost);
            };
            for (uint32_t seed : {11u, 12u}) {
              SCOPED_TRACE(std::string(c.name) + " async " + std::to_string(async) + " prefix " +
                           std::to_string(prefix) + " blocks " + std::to_string(blocks) +
                           " window " + std::to_string(window) + " seed " + std::to_string(seed));
              Traffic traffic{40, 300, window};
              const Outcome slow = Simulate(make, c.layout.block_size, seed, false, traffic);
              const Outcome fast = Simulate(make, c.layout.block_size, seed, true, traffic);
              EXPECT_EQ(slow.fast_steps, 0);
              EXPECT_GT(fast.fast_pool_steps, 0);  // stretches crossed boundaries
              preemptions += Preemptions(slow);
              ExpectIdentical(slow, fast);
              if (prefix) {
                traffic.index_every_block = true;
                ExpectIdentical(Simulate(make, c.layout.block_size, seed, false, traffic), fast);
                ExpectIdentical(Simulate(make, c.layout.block_size, seed, true, traffic), fast);
              }
              traffic.arrive_ahead = true;
              ExpectIdentical(Simulate(make, c.layout.block_size, seed, false, traffic),
                              Simulate(make, c.layout.block_size, seed, true, traffic));
              if (::testing::Test::HasFailure()) return;
            }
          }
          if (blocks == c.tight_blocks) {
            EXPECT_GT(preemptions, 0) << c.name << " prefix " << prefix;  // really tight
          }
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

// Arrivals are taken in (time, id) order whatever order they are handed over in (a decode
// instance's come from KV transfers of different lengths); one before a request the
// instance already admitted is a bug of the caller and throws.
TEST(Instance, ArrivalsAreTakenInTimeOrderNeverBeforeOneAdmitted) {
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
  instance->Arrive(request(1), 1'000);
  instance->RunUntil(kNever);
  const std::vector<RequestRecord> records = instance->TakeRecords();
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].id, 1);
  EXPECT_EQ(records[0].first_scheduled, 1'000);
  EXPECT_EQ(records[1].id, 0);
  EXPECT_THROW(instance->Arrive(request(2), 1'500), std::logic_error);
}

// A prefill instance hands a request over at its first token and keeps its blocks until
// the hook says its KV is sent; a request waiting for those blocks starts right then.
TEST(Instance, AHandedOffRequestHoldsItsBlocksUntilSent) {
  testing::SyntheticBundle bundle;
  testing::WriteDenseBundle(bundle);
  // 9 usable blocks of 16 tokens: a 100-token prompt takes 7, so two never fit together.
  const EngineSetup setup = MakeSetup("llama-3.1-8b", bundle.dir(), false, 10);
  std::unique_ptr<Instance> instance = setup.MakeInstance();
  constexpr SimTime kSendTakes = 5'000'000;
  SimTime sent = kNever;
  instance->OnHandOff([&](const Request& request, const RequestRecord& record) {
    EXPECT_EQ(request.id, 0);
    EXPECT_EQ(record.output_tokens, 0);  // the record is filled in when it settles
    EXPECT_NE(record.first_token, kNever);
    sent = record.first_token + kSendTakes;
    return sent;
  });
  auto request = [](int64_t id) {
    auto r = std::make_unique<Request>();
    r->id = id;
    r->name = "r" + std::to_string(id);
    r->prompt_tokens = 100;
    r->max_output_tokens = 1;
    return r;
  };
  std::unique_ptr<Request> p = request(0);
  p->remote_decode = true;
  instance->Arrive(std::move(p), 0);
  instance->Arrive(request(1), 1);
  instance->RunUntil(1);
  ASSERT_NE(sent, kNever);
  EXPECT_EQ(instance->num_sending(), 1);
  EXPECT_EQ(instance->kv_cache().num_free_blocks(), 9 - 7);
  instance->RunUntil(kNever);
  EXPECT_EQ(instance->num_sending(), 0);
  EXPECT_EQ(instance->kv_cache().num_free_blocks(), 9);
  const std::vector<RequestRecord> records = instance->TakeRecords();
  ASSERT_EQ(records.size(), 2u);
  EXPECT_TRUE(records[0].handed_off);
  EXPECT_EQ(records[0].output_tokens, 1);
  EXPECT_FALSE(records[1].handed_off);
  EXPECT_EQ(records[1].first_scheduled, sent);
}

}  // namespace
}  // namespace fleetsim
