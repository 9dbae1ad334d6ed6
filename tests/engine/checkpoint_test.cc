// Checkpoints of the engine's parts (docs/CHECKPOINT.md): an instance saved mid-run and
// loaded into a fresh one continues exactly as the original -- every request record and
// every step after the cut the same -- dense and hybrid, prefix caching on and off, tight
// pools (preemptions) and roomy ones, cut inside decode runs and between steps. A saved
// state loaded and saved again gives the same bytes (nothing saved is dropped on load),
// and a truncated or corrupt one is one located InputError, never a crash.
#include <initializer_list>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "core/checkpoint_io.h"
#include "core/input_error.h"
#include "engine/block_pool.h"
#include "engine/engine_setup.h"
#include "engine/instance.h"
#include "engine/test_models.h"
#include "perf/synthetic_bundle.h"

namespace fleetsim {
namespace {

// `num_spec` > 0: MTP speculation with that many drafts, at rates that reject some.
EngineSetup MakeSetup(const std::string& model, const std::string& bundle_dir, bool prefix_caching,
                      int64_t blocks, int num_spec = 0) {
  EngineConfig config;
  config.enable_prefix_caching = prefix_caching;
  config.max_num_batched_tokens = 8192;
  config.max_model_len = 32768;
  if (num_spec > 0) {
    config.num_speculative_tokens = num_spec;
    const std::vector<double> rates = {0.8, 0.55, 0.3};
    config.speculative_acceptance = std::vector<double>(rates.begin(), rates.begin() + num_spec);
  }
  return testing::EngineWithBlocks(model, bundle_dir, config, blocks);
}

struct Arrival {
  SimTime time;
  int64_t id, prompt, output;
  std::vector<BlockHash> hashes;
};

std::vector<Arrival> Traffic(uint32_t seed, int64_t block, int requests) {
  std::mt19937 rng(seed);
  std::vector<Arrival> arrivals;
  SimTime t = 0;
  for (int i = 0; i < requests; ++i) {
    t += static_cast<SimTime>(rng() % 20'000'000);
    Arrival a{t,
              i,
              1 + static_cast<int64_t>(rng() % (4 * static_cast<uint32_t>(block))),
              1 + static_cast<int64_t>(rng() % 500),
              {}};
    const BlockHash family = rng() % 4;
    for (int64_t b = 0; b < a.prompt / block; ++b)
      a.hashes.push_back(family * 100 + static_cast<BlockHash>(b) + 1);
    arrivals.push_back(a);
  }
  return arrivals;
}

struct EngineRun {
  std::unique_ptr<Instance> engine;
  std::vector<StepRecord> steps;
  std::vector<RequestRecord> records;
  // Prefill/decode disaggregation: even requests are handed off after their first token
  // (as on a prefill instance), odd ones arrive with their prompt computed elsewhere (as
  // on a decode instance).
  bool disaggregated = false;
};

// When a handed-off request's KV is sent: 40 ms after its first token, plus 1 ms per id,
// so that sends end out of first-token order and many are in flight at a cut.
SimTime SentAt(const Request& request, const RequestRecord& record) {
  return record.first_token + 40'000'000 + 1'000'000 * request.id;
}

void Attach(EngineRun& run) {
  run.engine->OnStep([&run](const StepRecord& s) { run.steps.push_back(s); });
  if (run.disaggregated) run.engine->OnHandOff(SentAt);
}

// Hands over the arrivals before `until` from `next` on, advancing in windows of `window`.
void AdvanceTo(EngineRun& run, const std::vector<Arrival>& arrivals, std::size_t& next,
               SimTime until, SimTime window) {
  SimTime t = run.engine->now();
  while (true) {
    const SimTime stop = std::min(until, next < arrivals.size() ? arrivals[next].time : until);
    for (SimTime w = (t / window + 1) * window; w < stop; w += window)
      run.engine->RunUntil(w);
    run.engine->RunUntil(stop);
    t = stop;
    if (next >= arrivals.size() || arrivals[next].time >= until) break;
    const Arrival& a = arrivals[next++];
    auto r = std::make_unique<Request>();
    r->id = a.id;
    r->name = "r" + std::to_string(a.id);
    r->prompt_tokens = a.prompt;
    r->max_output_tokens = a.output;
    r->prompt_block_hashes = a.hashes;
    if (run.disaggregated) {
      r->remote_decode = a.id % 2 == 0;
      r->remote_prefilled = !r->remote_decode;
      if (r->remote_decode) r->max_output_tokens = 1;
    }
    run.engine->Arrive(std::move(r), a.time);
  }
  for (RequestRecord& record : run.engine->TakeRecords())
    run.records.push_back(std::move(record));
}

void Finish(EngineRun& run, const std::vector<Arrival>& arrivals, std::size_t next) {
  AdvanceTo(run, arrivals, next, arrivals.back().time + 1, 7'000'000);
  run.engine->RunUntil(kNever);
  run.engine->FlushPending();
  for (RequestRecord& record : run.engine->TakeRecords())
    run.records.push_back(std::move(record));
}

void ExpectSameRecords(const std::vector<RequestRecord>& a, const std::vector<RequestRecord>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    SCOPED_TRACE("record " + std::to_string(i));
    EXPECT_EQ(a[i].id, b[i].id);
    EXPECT_EQ(a[i].name, b[i].name);
    EXPECT_EQ(a[i].arrival, b[i].arrival);
    EXPECT_EQ(a[i].first_scheduled, b[i].first_scheduled);
    EXPECT_EQ(a[i].first_token, b[i].first_token);
    EXPECT_EQ(a[i].finish, b[i].finish);
    EXPECT_EQ(a[i].input_tokens, b[i].input_tokens);
    EXPECT_EQ(a[i].output_tokens, b[i].output_tokens);
    EXPECT_EQ(a[i].cached_tokens, b[i].cached_tokens);
    EXPECT_EQ(a[i].preemptions, b[i].preemptions);
    EXPECT_EQ(a[i].state, b[i].state);
    EXPECT_EQ(a[i].reject_reason, b[i].reject_reason);
    EXPECT_EQ(a[i].handed_off, b[i].handed_off);
  }
}

void ExpectSameSteps(const std::vector<StepRecord>& a, const std::vector<StepRecord>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    SCOPED_TRACE("step " + std::to_string(i));
    EXPECT_EQ(a[i].start, b[i].start);
    EXPECT_EQ(a[i].duration, b[i].duration);
    EXPECT_EQ(a[i].prefill_tokens, b[i].prefill_tokens);
    EXPECT_EQ(a[i].decodes, b[i].decodes);
    EXPECT_EQ(a[i].generated_tokens, b[i].generated_tokens);
    EXPECT_EQ(a[i].preemptions, b[i].preemptions);
    EXPECT_EQ(a[i].cache_hit_tokens, b[i].cache_hit_tokens);
    EXPECT_EQ(a[i].running, b[i].running);
    EXPECT_EQ(a[i].waiting, b[i].waiting);
    EXPECT_EQ(a[i].kv_usage, b[i].kv_usage);
    EXPECT_EQ(a[i].decode_context_max, b[i].decode_context_max);
    EXPECT_EQ(a[i].draft_tokens, b[i].draft_tokens);
    EXPECT_EQ(a[i].accepted_tokens, b[i].accepted_tokens);
  }
}

// What a cut caught in flight, over every cut of a test.
struct InFlight {
  int64_t sending = 0;         // handed-off requests whose KV was still being sent
  int64_t drafts_pending = 0;  // drafts carried across the cut into the next step
  int64_t run_tails = 0;       // decode runs scheduling requests after their lanes
};

// Runs to `cut`, saves, loads into a fresh instance; both run to the end.
void ExpectContinuesIdentically(const EngineSetup& setup, uint32_t seed, SimTime cut,
                                bool disaggregated = false, InFlight* in_flight = nullptr) {
  const std::vector<Arrival> arrivals = Traffic(seed, setup.layout.block_size, 50);
  EngineRun original{setup.MakeInstance(), {}, {}, disaggregated};
  Attach(original);
  std::size_t next = 0;
  AdvanceTo(original, arrivals, next, cut, 7'000'000);
  ASSERT_GT(original.engine->steps(), 0);
  ASSERT_FALSE(original.engine->idle());  // a busy instance is cut
  if (in_flight) {
    in_flight->sending += original.engine->num_sending();
    in_flight->run_tails += original.engine->decode_run_tail() > 0 ? 1 : 0;
  }

  CheckpointWriter saved;
  original.engine->Save(saved);
  EngineRun restored{setup.MakeInstance(), {}, original.records, disaggregated};
  CheckpointReader reader(saved.bytes(), "test.bin");
  restored.engine->Load(reader);
  EXPECT_TRUE(reader.done());
  CheckpointWriter again;
  restored.engine->Save(again);
  EXPECT_EQ(saved.bytes(), again.bytes()) << "a saved field is not loaded";
  Attach(restored);
  original.steps.clear();

  Finish(original, arrivals, next);
  Finish(restored, arrivals, next);
  EXPECT_GT(original.steps.size(), 0U);
  EXPECT_EQ(restored.engine->steps(), original.engine->steps());
  EXPECT_EQ(restored.engine->busy_time(), original.engine->busy_time());
  ExpectSameSteps(original.steps, restored.steps);
  ExpectSameRecords(original.records, restored.records);
  // The first step after the cut verifies the drafts the requests carried across it.
  if (in_flight && !restored.steps.empty())
    in_flight->drafts_pending += restored.steps.front().draft_tokens;
}

// Every cut of every pool of `model`, prefix caching on and off.
void ExpectEveryCutContinuesIdentically(const std::string& model, const std::string& bundle_dir,
                                        std::initializer_list<int64_t> pools, uint32_t seed) {
  for (bool prefix : {false, true}) {
    for (int64_t blocks : pools) {
      const EngineSetup setup = MakeSetup(model, bundle_dir, prefix, blocks);
      for (SimTime cut : {150'000'000, 333'333'333, 600'000'001}) {
        SCOPED_TRACE(model + " prefix " + std::to_string(prefix) + " blocks " +
                     std::to_string(blocks) + " cut " + std::to_string(cut));
        ExpectContinuesIdentically(setup, seed, cut);
      }
    }
  }
}

TEST(InstanceCheckpoint, ContinuesIdenticallyDense) {
  testing::SyntheticBundle bundle;
  testing::WriteDenseBundle(bundle);
  ExpectEveryCutContinuesIdentically("llama-3.1-8b", bundle.dir(), {80, 5000}, 1);  // tight, roomy
}

TEST(InstanceCheckpoint, ContinuesIdenticallyHybrid) {
  testing::SyntheticBundle bundle;
  testing::WriteHybridBundle(bundle, {1});
  ExpectEveryCutContinuesIdentically("qwen3.8-27b", bundle.dir(), {40, 2000}, 4);
}

// MTP speculation: requests cut between steps carry their drafts (emitted_last_step) and
// lookahead slots (blocks) into the next step, and their acceptance draws go on where they
// stood (a function of the id and output position) -- the same drafts verified and
// accepted, step for step.
TEST(InstanceCheckpoint, ContinuesIdenticallySpeculative) {
  testing::SyntheticBundle bundle;
  testing::WriteHybridBundle(bundle, {1});
  // Without the bundle's resolved block size: speculation's wider conv state resolves its own.
  bundle.Meta("model: qwen3.8-27b\nhardware: H200-SXM\nsource: {kind: analytic}\n");
  InFlight in_flight;
  for (bool prefix : {false, true}) {
    for (int64_t blocks : {40, 2000}) {
      const EngineSetup setup = MakeSetup("qwen3.8-27b", bundle.dir(), prefix, blocks, 2);
      ASSERT_TRUE(setup.engine.speculative.enabled());
      for (SimTime cut : {150'000'000, 333'333'333, 600'000'001}) {
        SCOPED_TRACE("prefix " + std::to_string(prefix) + " blocks " + std::to_string(blocks) +
                     " cut " + std::to_string(cut));
        ExpectContinuesIdentically(setup, 5, cut, false, &in_flight);
      }
    }
  }
  EXPECT_GT(in_flight.drafts_pending, 0) << "no cut caught a request carrying drafts";
}

// A hybrid in mamba align mode on 8-token blocks: prompts split at block boundaries are
// the tails of decode runs, a chunk per step, and some cuts catch a run between two.
TEST(InstanceCheckpoint, ContinuesIdenticallyWithSplitPromptsInDecodeRuns) {
  testing::SyntheticBundle bundle;
  testing::WriteHybridBundle(bundle, {1});
  InFlight in_flight;
  for (bool prefix : {false, true}) {
    for (int64_t blocks : {160, 1600}) {
      EngineSetup setup = MakeSetup("qwen3.8-27b", bundle.dir(), prefix, blocks);
      setup.layout.block_size = 8;
      setup.layout.mamba_mode = MambaCacheMode::kAlign;
      setup.layout.groups = {{LayerType::kLinearAttention, {0}},
                             {LayerType::kLinearAttention, {1}},
                             {LayerType::kFullAttention, {2}}};
      for (uint32_t seed : {6u, 7u, 8u}) {
        // Cuts 10.3 ms apart: runs outlive the 7 ms windows, so some cuts fall between
        // chunks.
        for (SimTime cut = 100'000'000; cut < 700'000'000; cut += 10'300'000) {
          SCOPED_TRACE("prefix " + std::to_string(prefix) + " blocks " + std::to_string(blocks) +
                       " seed " + std::to_string(seed) + " cut " + std::to_string(cut));
          ExpectContinuesIdentically(setup, seed, cut, false, &in_flight);
        }
      }
    }
  }
  EXPECT_GT(in_flight.run_tails, 0) << "no cut caught a run with a split prompt under way";
}

// Prefill/decode disaggregation: handed-off requests holding their blocks until their KV
// is sent (released at the same times after the cut), and requests whose prompt was
// computed elsewhere (admitted recomputing one token), dense and hybrid.
TEST(InstanceCheckpoint, ContinuesIdenticallyWithHandOffsInFlight) {
  testing::SyntheticBundle dense;
  testing::WriteDenseBundle(dense);
  testing::SyntheticBundle hybrid;
  testing::WriteHybridBundle(hybrid, {1});
  InFlight in_flight;
  for (const auto& [model, dir, blocks] : {std::tuple{"llama-3.1-8b", dense.dir(), int64_t{80}},
                                           std::tuple{"llama-3.1-8b", dense.dir(), int64_t{5000}},
                                           std::tuple{"qwen3.8-27b", hybrid.dir(), int64_t{40}}}) {
    for (bool prefix : {false, true}) {
      const EngineSetup setup = MakeSetup(model, dir, prefix, blocks);
      for (SimTime cut : {150'000'000, 333'333'333, 600'000'001}) {
        SCOPED_TRACE(std::string(model) + " prefix " + std::to_string(prefix) + " blocks " +
                     std::to_string(blocks) + " cut " + std::to_string(cut));
        ExpectContinuesIdentically(setup, 3, cut, true, &in_flight);
      }
    }
  }
  EXPECT_GT(in_flight.sending, 0) << "no cut caught a KV transfer in flight";
}

TEST(InstanceCheckpoint, ATruncatedOrCorruptStateIsALocatedInputError) {
  testing::SyntheticBundle bundle;
  testing::WriteDenseBundle(bundle);
  const EngineSetup setup = MakeSetup("llama-3.1-8b", bundle.dir(), true, 200);
  const std::vector<Arrival> arrivals = Traffic(2, setup.layout.block_size, 30);
  EngineRun run{setup.MakeInstance(), {}, {}};
  std::size_t next = 0;
  AdvanceTo(run, arrivals, next, 200'000'000, 7'000'000);
  CheckpointWriter saved;
  run.engine->Save(saved);
  const std::string& bytes = saved.bytes();
  for (std::size_t keep = 0; keep < bytes.size(); keep += 1 + bytes.size() / 97) {
    const std::unique_ptr<Instance> fresh = setup.MakeInstance();
    CheckpointReader reader(std::string_view(bytes).substr(0, keep), "ckpt/rank-0.bin");
    try {
      fresh->Load(reader);
      ADD_FAILURE() << "loaded " << keep << " of " << bytes.size() << " bytes";
    } catch (const InputError& e) {
      EXPECT_EQ(e.file(), "ckpt/rank-0.bin");
      EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos) << e.what();
    }
  }
  // A pool of another size (another cluster config) is refused, not loaded.
  const EngineSetup other = MakeSetup("llama-3.1-8b", bundle.dir(), true, 300);
  CheckpointReader reader(bytes, "ckpt/rank-0.bin");
  EXPECT_THROW(other.MakeInstance()->Load(reader), InputError);
}

TEST(BlockPoolCheckpoint, ALoadedPoolEvictsInTheSameOrder) {
  BlockPool pool(64);
  std::vector<BlockId> held;
  ASSERT_TRUE(pool.Allocate(20, held));
  for (std::size_t i = 0; i < held.size(); ++i)
    pool.Cache(held[i], {1000 + i, static_cast<int32_t>(i % 2)});
  pool.Free(held);  // 20 cached free blocks, in this order
  std::vector<BlockId> more;
  ASSERT_TRUE(pool.Allocate(5, more));  // evicts the first five
  CheckpointWriter w;
  pool.Save(w);
  BlockPool loaded(64);
  CheckpointReader r(w.bytes(), "pool");
  loaded.Load(r);
  EXPECT_TRUE(r.done());
  for (BlockHash h = 1000; h < 1020; ++h) {
    const CacheKey key{h, static_cast<int32_t>((h - 1000) % 2)};
    EXPECT_EQ(loaded.Lookup(key), pool.Lookup(key)) << h;
  }
  EXPECT_EQ(loaded.num_free(), pool.num_free());
  std::vector<BlockId> a, b;
  ASSERT_TRUE(pool.Allocate(40, a));
  ASSERT_TRUE(loaded.Allocate(40, b));
  EXPECT_EQ(a, b);  // the same blocks evicted, in the same order
}

TEST(CheckpointIo, ACountPastTheEndIsRefusedBeforeAnyAllocation) {
  CheckpointWriter w;
  w.U64(uint64_t{1} << 60);  // a vector "of" 2^60 items, with nothing after
  CheckpointReader r(w.bytes(), "x.bin");
  r.Part("instance 7");
  try {
    r.Pods<int64_t>();
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "instance 7");
  }
}

}  // namespace
}  // namespace fleetsim
