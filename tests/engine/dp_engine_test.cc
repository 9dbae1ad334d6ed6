// Data parallelism with expert parallelism (engine/dp_engine.h): the front end's choice
// of rank, the lock-step's cost, worked by hand on a synthetic bundle whose MoE table is
// 2 + 0.5 x tokens + 0.25 x activated us (linear in each axis, so read exactly), the
// lock-step itself, conservation and determinism.
#include "engine/dp_engine.h"

#include <cmath>
#include <functional>
#include <random>
#include <set>
#include <tuple>

#include <gtest/gtest.h>

#include "core/checkpoint_io.h"
#include "core/project_paths.h"
#include "engine/dp_setup.h"
#include "engine/engine_setup.h"
#include "engine/test_models.h"
#include "model/hardware.h"
#include "model/weight_count.h"
#include "perf/synthetic_bundle.h"

namespace fleetsim {
namespace {

using testing::Card;
using testing::SettingErrorFor;

TEST(DpRankChooser, LowestWaitingTimesFourPlusRunningFirstOfEquals) {
  DpRankChooser chooser(2);
  chooser.Publish(0, {{0, 0}, {0, 0}});
  EXPECT_EQ(chooser.Choose(), 0);  // 0 vs 0: the first
  EXPECT_EQ(chooser.Choose(), 1);  // rank 0 now counts one waiting: 4 vs 0
  EXPECT_EQ(chooser.Choose(), 0);  // 4 vs 4
  chooser.Publish(0, {{1, 0}, {0, 3}});
  EXPECT_EQ(chooser.Choose(), 1);  // 4 vs 3
  EXPECT_EQ(chooser.Choose(), 0);  // 4 vs 7
  chooser.Publish(0, {{0, 5}, {1, 0}});
  EXPECT_EQ(chooser.Choose(), 1);  // 5 vs 4: waiting weighs four times running
}

TEST(DpRankChooser, PublishesAtMostEveryHundredMilliseconds) {
  DpRankChooser chooser(2);
  EXPECT_TRUE(chooser.Due(5));
  chooser.Publish(5, {{0, 0}, {0, 0}});
  EXPECT_FALSE(chooser.Due(5 + DpRankChooser::kPublishInterval - 1));
  EXPECT_TRUE(chooser.Due(5 + DpRankChooser::kPublishInterval));
}

// Qwen3-30B-A3B (48 MoE layers, 128 experts, top-8, hidden 2048) on a synthetic bundle.
class DpEngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    bundle_.Meta("model: qwen3-30b-a3b\nhardware: RTX-PRO-6000\nsource: {kind: analytic}\n");
    bundle_.Dense(1, {"embedding", "final_layernorm", "layernorm", "qkv_proj", "qk_norm",
                      "rotary_emb", "o_proj"});
    bundle_.PerSequence(1);
    bundle_.Attention(1);
    bundle_.Append("tp1/moe.csv", "tokens,activated_experts,time_us");
    for (int t : {1, 4096}) {
      for (int a : {8, 128})
        bundle_.Append("tp1/moe.csv", std::to_string(t) + "," + std::to_string(a) + "," +
                                          std::to_string(MoeTableUs(t, a)));
    }
    hardware_ = LoadHardware(HardwareCatalogDir(), "RTX-PRO-6000");
    EngineConfig config;
    config.max_num_seqs = 128;
    config.max_num_batched_tokens = 2048;
    KvBudget budget;
    budget.num_blocks = 4000;
    setup_ = BuildEngineSetup(Card("qwen3-30b-a3b"), LoadBundle(bundle_.dir(), 1), config, budget,
                              0, SettingErrorFor);
  }
  static double MoeTableUs(double tokens, double activated) {
    return 2 + 0.5 * tokens + 0.25 * activated;
  }
  // One rank's MoE blocks (48 layers) when `gathered` tokens reach experts sharded over
  // `dp` ranks: the table at gathered / dp tokens and 128 / dp x (1 - (1 - 8/128)^gathered)
  // experts.
  static double ShardUs(double gathered, int dp) {
    const double activated = 128.0 / dp * (1 - std::pow(1 - 8.0 / 128, gathered));
    return 48 * MoeTableUs(gathered / dp, activated);
  }
  // The rows of other ranks' experts (perf/expert_mask_cost.h), all 48 layers.
  double MaskedUs(double gathered) const {
    return 48 * ExpertMaskCost(setup_.card, hardware_, 1, 2).LayerUs(gathered);
  }
  std::unique_ptr<DpEngine> Engine(int64_t capture = 256) {
    return MakeDpEngine(setup_, 2, hardware_, capture);
  }
  static std::unique_ptr<Request> NewRequest(int64_t id, int64_t prompt, int64_t output) {
    auto r = std::make_unique<Request>();
    r->id = id;
    r->name = "r" + std::to_string(id);
    r->prompt_tokens = prompt;
    r->max_output_tokens = output;
    return r;
  }

  testing::SyntheticBundle bundle_;
  HardwareSpec hardware_;
  EngineSetup setup_;
};

TEST_F(DpEngineTest, ShardCostIsTheTableAtTheShardsPairsAndExperts) {
  const StepCostModel& cost = *setup_.cost;
  EXPECT_NEAR(cost.ExpertShardMoeUs(6, 2), ShardUs(6, 2), 1e-9);
  // 6 gathered tokens over 2 ranks: 3 tokens' worth of pairs, 64 x (1 - (15/16)^6) =
  // 20.0… experts: 2 + 1.5 + 5.0… us per layer.
  EXPECT_NEAR(cost.ExpertShardMoeUs(6, 2) / 48, 2 + 1.5 + 0.25 * 64 * (1 - std::pow(15.0 / 16, 6)),
              1e-9);
  // One rank holds every expert: the whole MoE block, as a single engine charges it.
  BatchShape batch;
  batch.AddPrefill(100, 0, true);
  EXPECT_EQ(cost.Cost(batch).total_ns - cost.CostOutsideMoe(batch, 100).total_ns,
            std::llround(ShardUs(100, 1) * 1000));
}

TEST_F(DpEngineTest, IdleRankRunsADummyBatchAndTheStepIsTheSlowestPlusTheExperts) {
  const std::unique_ptr<DpEngine> engine = Engine();
  BatchShape decodes;
  decodes.AddDecodes(3, 300, 100, 100);
  // Rank 1 idle: its dummy batch is 1 token of no sequence (no attention, no logits).
  // Rank 0's 3 run as the capture size 4, and the dummy is padded to it (CUDA graphs): the
  // dispatch gathers 2 x 4 tokens.
  const BatchShape dummy;
  BatchShape one;
  one.AddDecode(1);
  EXPECT_LT(setup_.cost->CostOutsideMoe(dummy, 1).total_ns,
            setup_.cost->CostOutsideMoe(one, 1).total_ns);
  const DpStepTiming idle = engine->Time({decodes, std::nullopt});
  EXPECT_EQ(idle.gathered_tokens, 8);
  EXPECT_EQ(idle.slowest_rank_ns, setup_.cost->CostOutsideMoe(decodes, 4).total_ns);
  EXPECT_GT(setup_.cost->CostOutsideMoe(decodes, 4).total_ns,
            setup_.cost->CostOutsideMoe(decodes, 3).total_ns);
  EXPECT_EQ(idle.masked_ns, std::llround(MaskedUs(8) * 1000));
  EXPECT_GT(idle.masked_ns, 0);
  EXPECT_EQ(idle.moe_ns, std::llround(ShardUs(8, 2) * 1000) + idle.masked_ns);
  const CollectiveModel group(hardware_, 2, Dtype::kBfloat16);
  // The dispatch carries the router logits, one per expert (128).
  EXPECT_EQ(idle.exchange_ns,
            std::llround(48 * group.ExpertDispatchCombineUs(8, 2048, 128) * 1000));
  EXPECT_GT(idle.exchange_ns, 0);
  EXPECT_EQ(idle.total_ns, idle.slowest_rank_ns + idle.moe_ns + idle.exchange_ns);

  // Both busy: the slower rank sets the step.
  BatchShape prefill;
  prefill.AddPrefill(200, 0, true);
  const DpStepTiming both = engine->Time({decodes, prefill});
  EXPECT_EQ(both.slowest_rank_ns, std::max(setup_.cost->CostOutsideMoe(decodes, 200).total_ns,
                                           setup_.cost->CostOutsideMoe(prefill, 200).total_ns));
  EXPECT_EQ(both.gathered_tokens, 400);
  EXPECT_EQ(both.moe_ns, std::llround(ShardUs(400, 2) * 1000) + std::llround(MaskedUs(400) * 1000));

  // 37 and 5 tokens: capture sizes 40 and 8, both run 40.
  BatchShape five, thirty_seven;
  five.AddUniformDecodes(5, 100);
  thirty_seven.AddUniformDecodes(37, 100);
  EXPECT_EQ(engine->Time({thirty_seven, five}).gathered_tokens, 80);

  // Beyond the CUDA-graph sizes the batch runs eager and the ranks are not padded to one
  // size; the others still run at their own capture size: 300 + 1, 300 + 4.
  BatchShape big;
  big.AddPrefill(300, 0, true);
  EXPECT_EQ(engine->Time({big, std::nullopt}).gathered_tokens, 301);
  const DpStepTiming eager = engine->Time({big, decodes});
  EXPECT_EQ(eager.gathered_tokens, 304);
  EXPECT_EQ(eager.slowest_rank_ns, std::max(setup_.cost->CostOutsideMoe(big, 300).total_ns,
                                            setup_.cost->CostOutsideMoe(decodes, 4).total_ns));
  // Unequal counts: the exchange is vLLM's all_gatherv / reduce_scatterv, a broadcast and
  // a reduce rooted at each rank, priced on each rank's own count.
  const int64_t runs[] = {300, 4};
  EXPECT_EQ(eager.exchange_ns,
            std::llround(48 * group.ExpertDispatchCombineUs(runs, 2048, 128) * 1000));
  EXPECT_GT(eager.exchange_ns,
            std::llround(48 * group.ExpertDispatchCombineUs(304, 2048, 128) * 1000));
  EXPECT_EQ(Engine(0)->Time({decodes, std::nullopt}).gathered_tokens, 4);  // no CUDA graphs

  // Both idle (a wave's trailing dummy steps): two 1-token dummy batches.
  const DpStepTiming dummies = engine->Time({std::nullopt, std::nullopt});
  EXPECT_EQ(dummies.gathered_tokens, 2);
  EXPECT_EQ(dummies.slowest_rank_ns, setup_.cost->CostOutsideMoe(dummy, 1).total_ns);
  EXPECT_EQ(dummies.moe_ns, std::llround(ShardUs(2, 2) * 1000) + std::llround(MaskedUs(2) * 1000));
}

TEST_F(DpEngineTest, RanksStepTogether) {
  std::unique_ptr<DpEngine> engine = Engine();
  std::vector<DpStepRecord> steps;
  engine->OnStep([&](const DpStepRecord& s) { steps.push_back(s); });
  // Two requests at once: the first to rank 0, the second to rank 1 (rank 0 now counts one
  // waiting). Prompts 100 and 10, one output token each: both prefill in the first
  // lock-step and both first tokens (and finishes) come at its end.
  engine->Arrive(NewRequest(0, 100, 1), 1000);
  engine->Arrive(NewRequest(1, 10, 1), 1000);
  engine->RunUntil(kNever);
  // The wave's work ends after its first step; vLLM checks for the end every 32nd step, so
  // 31 dummy lock-steps follow.
  ASSERT_EQ(steps.size(), 32u);
  for (std::size_t i = 1; i < steps.size(); ++i) {
    EXPECT_EQ(steps[i].busy_ranks, 0);
    EXPECT_EQ(steps[i].start, steps[i - 1].start + steps[i - 1].timing.total_ns);
    EXPECT_EQ(steps[i].timing.gathered_tokens, 2);
  }
  EXPECT_EQ(steps[0].start, 1000);
  EXPECT_EQ(steps[0].busy_ranks, 2);
  EXPECT_EQ(steps[0].timing.gathered_tokens, 208);  // 100 -> capture size 104, the 10 padded to it
  std::vector<int32_t> ranks;
  const std::vector<RequestRecord> records = engine->TakeRecords(&ranks);
  ASSERT_EQ(records.size(), 2u);
  ASSERT_EQ(ranks.size(), 2u);
  EXPECT_EQ(records[0].id, 0);  // rank 0's records come first
  EXPECT_EQ(ranks, (std::vector<int32_t>{0, 1}));
  for (const RequestRecord& r : records) {
    EXPECT_EQ(r.state, RequestState::kFinished);
    EXPECT_EQ(r.first_token, 1000 + steps[0].timing.total_ns);
    EXPECT_EQ(r.finish, 1000 + steps[0].timing.total_ns);
  }

  // One request on rank 0 producing 3 tokens while rank 1 has none: every step is a
  // lock-step with one busy rank, and the idle rank's clock follows.
  std::unique_ptr<DpEngine> lone = Engine();
  steps.clear();
  lone->OnStep([&](const DpStepRecord& s) { steps.push_back(s); });
  lone->Arrive(NewRequest(7, 50, 3), 0);
  lone->RunUntil(kNever);
  ASSERT_EQ(steps.size(), 32u);  // prefill, two decodes, 29 dummy steps to the wave's end
  SimTime t = 0;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    EXPECT_EQ(steps[i].start, t);
    EXPECT_EQ(steps[i].busy_ranks, i < 3 ? 1 : 0);
    t += steps[i].timing.total_ns;
  }
  EXPECT_EQ(lone->rank(0).now(), t);  // both ranks' clocks at the wave's last step end
  EXPECT_EQ(lone->rank(1).now(), t);
  EXPECT_EQ(steps[0].timing.gathered_tokens,
            112);  // 50 as the capture size 56, the dummy padded to it
  EXPECT_EQ(steps[1].timing.gathered_tokens, 2);
  const SimTime third_end = steps[2].start + steps[2].timing.total_ns;
  EXPECT_EQ(lone->TakeRecords().at(0).finish, third_end);

  // A request arriving during the trailing dummy steps waits for the one in progress and
  // joins the wave; one arriving after the wave ended starts a lock-step at its arrival.
  const SimTime during = steps[10].start + 1;
  steps.clear();
  std::unique_ptr<DpEngine> again = Engine();
  again->OnStep([&](const DpStepRecord& s) { steps.push_back(s); });
  again->Arrive(NewRequest(1, 50, 3), 0);
  again->Arrive(NewRequest(2, 10, 1), during);
  again->RunUntil(kNever);
  ASSERT_GT(steps.size(), 11u);
  EXPECT_EQ(steps[11].start, steps[10].start + steps[10].timing.total_ns);
  EXPECT_EQ(steps[11].busy_ranks, 1);
  const SimTime wave_end = steps.back().start + steps.back().timing.total_ns;
  ASSERT_EQ(steps.size(), 32u);  // still one wave
  again->Arrive(NewRequest(3, 10, 1), wave_end + 5);
  again->RunUntil(kNever);
  ASSERT_EQ(steps.size(), 64u);
  EXPECT_EQ(steps[32].start, wave_end + 5);
}

struct Replayed {
  std::vector<RequestRecord> records;
  std::vector<int> ranks;
};

Replayed Replay(DpEngine& engine, uint32_t seed, int requests) {
  std::mt19937 rng(seed);
  Replayed run;
  SimTime t = 0;
  for (int i = 0; i < requests; ++i) {
    t += static_cast<SimTime>(rng() % 30'000'000);
    auto r = std::make_unique<Request>();
    r->id = i;
    r->name = "r" + std::to_string(i);
    r->prompt_tokens = 1 + static_cast<int64_t>(rng() % 3000);
    r->max_output_tokens = 1 + static_cast<int64_t>(rng() % 300);
    engine.Arrive(std::move(r), t);
  }
  engine.RunUntil(kNever);
  std::vector<int32_t> ranks;
  run.records = engine.TakeRecords(&ranks);
  run.ranks.assign(ranks.begin(), ranks.end());
  return run;
}

TEST_F(DpEngineTest, EveryRequestSettlesOnceAndRunsRepeat) {
  std::unique_ptr<DpEngine> a = Engine(), b = Engine();
  const Replayed first = Replay(*a, 11, 400), second = Replay(*b, 11, 400);
  ASSERT_EQ(first.records.size(), 400u);
  std::set<int64_t> ids;
  for (const RequestRecord& r : first.records) {
    EXPECT_EQ(r.state, RequestState::kFinished);
    EXPECT_TRUE(ids.insert(r.id).second);
  }
  // Both ranks served a share.
  EXPECT_GT(std::count(first.ranks.begin(), first.ranks.end(), 1), 50);
  EXPECT_GT(std::count(first.ranks.begin(), first.ranks.end(), 0), 50);
  EXPECT_EQ(first.ranks, second.ranks);
  ASSERT_EQ(second.records.size(), first.records.size());
  for (std::size_t i = 0; i < first.records.size(); ++i) {
    EXPECT_EQ(first.records[i].id, second.records[i].id);
    EXPECT_EQ(first.records[i].first_token, second.records[i].first_token);
    EXPECT_EQ(first.records[i].finish, second.records[i].finish);
  }
}

// A checkpoint (docs/CHECKPOINT.md): the engine run in windows, its arrivals handed over a
// window ahead (as the fleet delivers them), saved at the end of window `cut`, loaded into
// a fresh engine that runs on. Everything it does -- lock-steps, the ranks' steps and dummy
// batches, records and their ranks -- is the uninterrupted run's.
struct Windowed {
  std::vector<std::string> steps;  // every lock-step and rank step, as text
  std::vector<RequestRecord> records;
  std::vector<int32_t> ranks;
  std::vector<std::string> cut_state;  // at the cut: wave position, arrivals not given a rank
};

Windowed RunInWindows(const std::function<std::unique_ptr<DpEngine>()>& make, int cut) {
  constexpr SimTime kWindow = 7'000'000;  // 7 ms: not a multiple of a lock-step
  std::mt19937 rng(5);
  std::vector<std::pair<SimTime, std::unique_ptr<Request>>> arrivals;
  SimTime t = 0;
  for (int i = 0; i < 300; ++i) {
    t += static_cast<SimTime>(rng() % 20'000'000);
    auto r = std::make_unique<Request>();
    r->id = i;
    r->name = "r" + std::to_string(i);
    r->prompt_tokens = 1 + static_cast<int64_t>(rng() % 3000);
    r->max_output_tokens = 1 + static_cast<int64_t>(rng() % 200);
    arrivals.emplace_back(t, std::move(r));
  }
  Windowed run;
  const auto observe = [&run](DpEngine& engine) {
    engine.OnStep([&run](const DpStepRecord& s) {
      run.steps.push_back("step " + std::to_string(s.start) + " " +
                          std::to_string(s.timing.total_ns) + " " + std::to_string(s.busy_ranks) +
                          " " + std::to_string(s.running) + " " + std::to_string(s.waiting));
    });
    engine.OnRankStep([&run](int rank, const StepRecord& s) {
      run.steps.push_back("rank " + std::to_string(rank) + " " + std::to_string(s.start) + " " +
                          std::to_string(s.duration) + " " + std::to_string(s.prefill_tokens) +
                          " " + std::to_string(s.generated_tokens) + " " +
                          std::to_string(s.running) + " " + std::to_string(s.waiting));
    });
  };
  std::unique_ptr<DpEngine> engine = make();
  observe(*engine);
  std::size_t next = 0;
  for (int window = 0; next < arrivals.size() || engine->NextEventTime() != kNever; ++window) {
    const SimTime end = (window + 1) * kWindow;
    while (next < arrivals.size() && arrivals[next].first < end + kWindow) {
      engine->Arrive(std::move(arrivals[next].second), arrivals[next].first);
      ++next;
    }
    engine->RunUntil(end);
    if (window != cut) continue;
    run.cut_state = {std::to_string(engine->steps()), std::to_string(engine->outstanding()),
                     std::to_string(engine->num_running() + engine->num_waiting())};
    CheckpointWriter w;
    engine->Save(w);
    engine = make();
    observe(*engine);
    CheckpointReader r(w.bytes(), "dp.ckpt");
    engine->Load(r);
    EXPECT_TRUE(r.done());
    CheckpointWriter again;
    engine->Save(again);
    EXPECT_EQ(again.bytes(), w.bytes()) << "a loaded engine saves what it loaded";
  }
  run.records = engine->TakeRecords(&run.ranks);
  return run;
}

TEST_F(DpEngineTest, ACheckpointedEngineRunsOnAsTheUninterruptedOne) {
  const auto make = [this] { return Engine(); };
  const Windowed whole = RunInWindows(make, -1);
  ASSERT_EQ(whole.records.size(), 300u);
  // Cuts spread over the run: mid-wave (between two wave-end checks), between waves, with
  // requests handed over and not yet given a rank, with settled records not yet taken.
  bool mid_wave = false, unassigned = false;
  for (int cut = 3; cut < 400; cut += 23) {
    SCOPED_TRACE("cut after window " + std::to_string(cut));
    const Windowed resumed = RunInWindows(make, cut);
    ASSERT_FALSE(resumed.cut_state.empty());
    mid_wave = mid_wave || std::stoll(resumed.cut_state[0]) % DpEngine::kWaveCheckSteps != 0;
    unassigned = unassigned || std::stoll(resumed.cut_state[1]) > std::stoll(resumed.cut_state[2]);
    EXPECT_EQ(resumed.steps, whole.steps);
    EXPECT_EQ(resumed.ranks, whole.ranks);
    ASSERT_EQ(resumed.records.size(), whole.records.size());
    const auto fields = [](const RequestRecord& r) {
      return std::tie(r.id, r.name, r.arrival, r.first_scheduled, r.first_token, r.finish,
                      r.input_tokens, r.output_tokens, r.cached_tokens, r.preemptions, r.state,
                      r.reject_reason, r.handed_off);
    };
    for (std::size_t i = 0; i < whole.records.size(); ++i)
      EXPECT_TRUE(fields(resumed.records[i]) == fields(whole.records[i]))
          << "request " << whole.records[i].id;
  }
  EXPECT_TRUE(mid_wave) << "no cut fell between two wave-end checks";
  EXPECT_TRUE(unassigned) << "no cut held requests not yet given a rank";
}

TEST(DpSetup, RefusesWhatIsNotMoeWithExpertParallelism) {
  EXPECT_FALSE(DpExpertParallelViolation(Card("llama-3.1-8b"), 1, false));
  EXPECT_FALSE(DpExpertParallelViolation(Card("qwen3-30b-a3b"), 2, true));
  EXPECT_NE(
      DpExpertParallelViolation(Card("qwen3-30b-a3b"), 2, false)->find("enable_expert_parallel"),
      std::string::npos);
  EXPECT_NE(DpExpertParallelViolation(Card("llama-3.1-8b"), 2, true)->find("no MoE layers"),
            std::string::npos);
}

TEST(DpSetup, EachRankHoldsItsShareOfTheExperts) {
  // 48 layers x 128 experts x 3 x 768 x 2048 weights x 2 bytes.
  EXPECT_EQ(ExpertWeightBytesPerTpRank(Card("qwen3-30b-a3b"), 1), 57'982'058'496);
  EXPECT_EQ(ExpertWeightBytesPerTpRank(Card("qwen3-30b-a3b"), 2), 28'991'029'248);
  KvBudget budget;
  budget.hardware = LoadHardware(HardwareCatalogDir(), "RTX-PRO-6000");
  const KvBudget one = DpExpertParallelKvBudget(Card("qwen3-30b-a3b"), 1, 1, budget);
  const KvBudget two = DpExpertParallelKvBudget(Card("qwen3-30b-a3b"), 1, 2, budget);
  // Half the experts leave the rank: 28,991,029,248 bytes more for the KV cache.
  EXPECT_EQ(*two.kv_cache_bytes - *one.kv_cache_bytes, 28'991'029'248);
  budget.num_blocks = 10;  // a budget that names its blocks stays as given
  EXPECT_FALSE(DpExpertParallelKvBudget(Card("qwen3-30b-a3b"), 1, 2, budget).kv_cache_bytes);
  EXPECT_EQ(DefaultCudagraphCaptureTokens(128, 2048), 256);
  EXPECT_EQ(DefaultCudagraphCaptureTokens(1024, 8192), 512);
}

// vLLM 0.19's default capture sizes: 1, 2, 4, every 8 below 256, every 16 from 256, up to
// min(2 x max_num_seqs, 512, max_num_batched_tokens) rounded down to one of them.
TEST(CudagraphSizes, LargestAndPaddedAsVllmListsThem) {
  EXPECT_EQ(DefaultCudagraphCaptureTokens(1024, 300), 288);
  EXPECT_EQ(DefaultCudagraphCaptureTokens(50, 2048), 96);
  EXPECT_EQ(DefaultCudagraphCaptureTokens(2, 2048), 4);
  EXPECT_EQ(DefaultCudagraphCaptureTokens(1, 2048), 2);
  EXPECT_EQ(DefaultCudagraphCaptureTokens(256, 3), 2);
  const std::vector<std::pair<int64_t, int64_t>> padded = {
      {1, 1},     {2, 2},     {3, 4},     {4, 4},     {5, 8},     {37, 40},
      {248, 248}, {249, 256}, {256, 256}, {257, 272}, {500, 512}, {512, 512}};
  for (const auto& [tokens, size] : padded)
    EXPECT_EQ(CudagraphPaddedTokens(tokens, 512), size) << tokens;
  EXPECT_EQ(CudagraphPaddedTokens(513, 512), 0);
  EXPECT_EQ(CudagraphPaddedTokens(257, 256), 0);
  EXPECT_EQ(CudagraphPaddedTokens(300, 288), 0);
  EXPECT_EQ(CudagraphPaddedTokens(3, 0), 0);
}

}  // namespace
}  // namespace fleetsim
