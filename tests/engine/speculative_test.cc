// MTP speculative decoding (engine/speculative.h), worked by hand: vLLM's token budget with
// drafts, acceptance at rates 1 and 0, lookahead KV slots and rejected drafts rolled back,
// and what the instance charges and records for a speculative step.
#include "engine/speculative.h"

#include <gtest/gtest.h>

#include "engine/engine_harness.h"
#include "engine/engine_setup.h"
#include "engine/instance.h"
#include "perf/synthetic_bundle.h"

namespace fleetsim {
namespace {

using testing::Card;
using testing::EngineHarness;
using testing::HybridSpeculative;
using Chunks = std::vector<std::string>;

InputError ResolveError(const std::string& model, const EngineConfig& config) {
  return testing::CatchInputError([&] { testing::Resolve(Card(model), config); });
}

TEST(Speculative, ModelCardsSayHowManyMtpLayersTheyShip) {
  // config.json: "mtp_num_hidden_layers": 1 (Qwen3.5-family configs); Llama ships none.
  EXPECT_EQ(Card("qwen3.8-27b").mtp_layers, 1);
  EXPECT_EQ(Card("qwen3.5-35b-a3b").mtp_layers, 1);
  EXPECT_EQ(Card("llama-3.1-8b").mtp_layers, 0);
}

TEST(Speculative, RefusesWhatVllmCannotRunOrRatesThatCannotBe) {
  EngineConfig config = HybridSpeculative(2048, {0.8});
  EXPECT_EQ(ResolveError("llama-3.1-8b", config).field(), "num_speculative_tokens");

  EngineConfig eagle = config;
  eagle.speculative_method = "eagle";
  EXPECT_EQ(ResolveError("qwen3.8-27b", eagle).field(), "method");

  for (const std::vector<double>& rates :
       std::vector<std::vector<double>>{{1.5}, {-0.1}, {0.5, 0.7}}) {
    EngineConfig bad = HybridSpeculative(2048, rates);
    EXPECT_EQ(ResolveError("qwen3.8-27b", bad).field(), "acceptance") << rates[0];
  }
  EngineConfig short_list = HybridSpeculative(2048, {0.5});
  short_list.num_speculative_tokens = 2;
  EXPECT_EQ(ResolveError("qwen3.8-27b", short_list).field(), "acceptance");

  EngineConfig beyond_default = config;
  beyond_default.speculative_acceptance.reset();
  beyond_default.num_speculative_tokens = 9;  // the default covers 8 positions
  EXPECT_EQ(ResolveError("qwen3.8-27b", beyond_default).field(), "acceptance");
}

TEST(Speculative, DefaultRatesAreTheFirstKOfVllmsPublishedEight) {
  EngineConfig config;
  config.num_speculative_tokens = 3;
  const ResolvedEngineConfig r = testing::Resolve(Card("qwen3.8-27b"), config);
  EXPECT_EQ(r.num_spec, 3);
  EXPECT_TRUE(r.speculative.acceptance_defaulted);
  EXPECT_EQ(r.speculative.acceptance, (std::vector<double>{0.7568, 0.6011, 0.4976}));
}

TEST(Speculative, RatesOneAndZeroAcceptAllOrNone) {
  SpeculativeDecoding all{3, {1.0, 1.0, 1.0}, false};
  SpeculativeDecoding none{3, {0.0, 0.0, 0.0}, false};
  for (int64_t id = 0; id < 50; ++id) {
    EXPECT_EQ(AcceptedDrafts(all, id, id * 7, 3), 3);
    EXPECT_EQ(AcceptedDrafts(all, id, id * 7, 2), 2);  // only the drafts scheduled
    EXPECT_EQ(AcceptedDrafts(none, id, id * 7, 3), 0);
  }
}

TEST(Speculative, AcceptedDraftsFollowThePerPositionRates) {
  // P(accepted >= i + 1) = acceptance[i]: with 0.8, 0.5, 0.2 the mean accepted count is
  // 0.8 + 0.5 + 0.2 = 1.5 and its variance 1 x 0.8 + 3 x 0.5 + 5 x 0.2 - 1.5^2 = 1.05; over
  // 40,000 draws (request, position) the mean's standard error is 0.0051, so 0.03 is six.
  const SpeculativeDecoding spec{3, {0.8, 0.5, 0.2}, false};
  int64_t total = 0, at_least[3] = {0, 0, 0};
  const int n = 40000;
  for (int i = 0; i < n; ++i) {
    const int64_t a = AcceptedDrafts(spec, i / 100, i % 100, 3);
    total += a;
    for (int64_t j = 0; j < a; ++j)
      ++at_least[j];
  }
  EXPECT_NEAR(static_cast<double>(total) / n, 1.5, 0.03);
  EXPECT_NEAR(static_cast<double>(at_least[0]) / n, 0.8, 0.02);
  EXPECT_NEAR(static_cast<double>(at_least[2]) / n, 0.2, 0.02);
  // One stream per request: the same (request, position) draws the same, whatever ran before.
  EXPECT_EQ(AcceptedDrafts(spec, 17, 5, 3), AcceptedDrafts(spec, 17, 5, 3));
}

TEST(Speculative, DraftsCountInTheTokenBudgetAndAreTrimmedByIt) {
  // Budget 5, k = 2. Step 1: both 2-token prompts (4 tokens), each emits a token. Step 2:
  // a schedules its token + 2 drafts (vLLM: num_tokens_with_spec - num_computed = 3 + 2 - 2),
  // leaving 2 for b: its token + 1 draft (the second trimmed).
  EngineHarness engine("qwen3.8-27b", HybridSpeculative(5, {1.0, 1.0}), 400);
  engine.Add("a", 2, 20);
  engine.Add("b", 2, 20);
  EXPECT_EQ(EngineHarness::Chunks(engine.Step()), (Chunks{"a:2@0", "b:2@0"}));
  const StepPlan second = engine.Step();
  EXPECT_EQ(EngineHarness::Chunks(second), (Chunks{"a:3@2", "b:2@2"}));
  EXPECT_EQ(second.total_tokens, 5);
  EXPECT_EQ(second.chunks[0].drafts, 2);
  EXPECT_EQ(second.chunks[1].drafts, 1);
  EXPECT_EQ(engine.scheduler().step_drafts(), 3);
  EXPECT_EQ(engine.scheduler().step_accepted(), 3);
  // a: 1 + 3 outputs, computed 5 (= tokens - 1); b: 1 + 2 outputs, computed 4.
  const auto& requests = engine.requests();
  EXPECT_EQ(requests[0]->num_output, 4);
  EXPECT_EQ(requests[0]->num_computed, 5);
  EXPECT_EQ(requests[1]->num_output, 3);
  EXPECT_EQ(requests[1]->num_computed, 4);
  EXPECT_EQ(EngineHarness::Chunks(engine.Step()), (Chunks{"a:3@5", "b:2@4"}));
}

TEST(Speculative, RateOneEmitsKPlusOneTokensPerStep) {
  EngineHarness engine("qwen3.8-27b", HybridSpeculative(2048, {1.0, 1.0}), 400);
  Request* r = engine.Add("r", 100, 10);
  const std::vector<Chunks> expected{{"r:100@0"}, {"r:3@100"}, {"r:3@103"}, {"r:3@106"}};
  EXPECT_EQ(engine.RunToIdle(), expected);  // outputs 1, 4, 7, 10
  EXPECT_EQ(r->num_output, 10);
  EXPECT_EQ(r->state, RequestState::kFinished);
}

TEST(Speculative, TokensPastTheOutputLimitAreDropped) {
  EngineHarness engine("qwen3.8-27b", HybridSpeculative(2048, {1.0, 1.0}), 400);
  Request* r = engine.Add("r", 100, 9);
  EXPECT_EQ(engine.RunToIdle().size(), 4u);  // outputs 1, 4, 7, then 2 of the 3 accepted
  EXPECT_EQ(r->num_output, 9);
}

TEST(Speculative, RateZeroEmitsOneTokenPerStepAndRollsTheDraftsBack) {
  EngineHarness engine("qwen3.8-27b", HybridSpeculative(2048, {0.0, 0.0}), 400);
  Request* r = engine.Add("r", 100, 10);
  std::vector<Chunks> expected{{"r:100@0"}};
  // Each step computes 3 tokens and keeps 1: num_computed 100 -> 101 -> ... -> 108.
  for (int64_t c = 100; c <= 108; ++c)
    expected.push_back({"r:3@" + std::to_string(c)});
  EXPECT_EQ(engine.RunToIdle(), expected);
  EXPECT_EQ(r->num_output, 10);
}

TEST(Speculative, LookaheadSlotsAreHeldAndKeptAfterARollback) {
  // A prompt 4 tokens short of a block. Step 2 computes 3 tokens (B - 1 in all), and vLLM
  // holds k = 2 lookahead slots past them: B + 1 tokens, a second block per attention
  // group. GDN groups hold 1 + k state slots from admission (mode "none").
  EngineHarness spec("qwen3.8-27b", HybridSpeculative(32768, {0.0, 0.0}), 400);
  const int64_t block = spec.layout().block_size;
  const int64_t attention = spec.layout().AttentionGroups();
  const int64_t gdn = spec.layout().GdnGroups();
  ASSERT_GT(attention, 0);
  ASSERT_GT(gdn, 0);
  Request* r = spec.Add("r", block - 4, 100);
  const int64_t usable = spec.kv().num_usable_blocks();
  spec.Step();
  EXPECT_EQ(spec.kv().num_free_blocks(), usable - attention * 1 - gdn * 3);
  spec.Step();
  EXPECT_EQ(r->num_computed, block - 3);  // both drafts rejected
  EXPECT_EQ(spec.kv().num_free_blocks(), usable - attention * 2 - gdn * 3);
  for (std::size_t g = 0; g < spec.layout().groups.size(); ++g) {
    const bool is_attention = spec.layout().groups[g].type == LayerType::kFullAttention;
    EXPECT_EQ(r->blocks[g].size(), is_attention ? 2u : 3u) << "group " << g;
  }

  // Without speculation the same two steps stay in one block, one state slot per GDN group.
  // (The block differs: 784 tokens without speculation, 800 with k = 2, whose conv state is
  // 2 rows wider: 16 x cdiv(3 x 10240 x 2 + 3145728 bytes, 16 x 4096) = 784 and
  // 16 x cdiv(5 x 10240 x 2 + 3145728, 16 x 4096) = 800.)
  EXPECT_EQ(block, 800);
  EngineConfig plain = HybridSpeculative(32768, {});
  plain.speculative_acceptance.reset();
  EngineHarness base("qwen3.8-27b", plain, 400);
  const int64_t base_block = base.layout().block_size;
  EXPECT_EQ(base_block, 784);
  base.Add("r", base_block - 4, 100);
  base.Step();
  base.Step();
  EXPECT_EQ(base.kv().num_free_blocks(), base.kv().num_usable_blocks() - attention - gdn);
}

// An instance over the synthetic hybrid bundle (every kernel a simple formula).
EngineSetup SpeculativeSetup(const std::string& bundle_dir, std::vector<double> acceptance) {
  EngineConfig config = HybridSpeculative(8192, std::move(acceptance));
  if (config.num_speculative_tokens == 0) config.speculative_acceptance.reset();
  KvBudget budget;
  budget.num_blocks = 400;
  return BuildEngineSetup(Card("qwen3.8-27b"), LoadBundle(bundle_dir), config, budget, 0,
                          testing::SettingErrorFor);
}

struct OneRequest {
  RequestRecord record;
  std::vector<StepRecord> steps;
};

OneRequest RunOne(const EngineSetup& setup, int64_t prompt, int64_t outputs) {
  std::unique_ptr<Instance> instance = setup.MakeInstance();
  OneRequest out;
  instance->OnStep([&](const StepRecord& s) { out.steps.push_back(s); });
  auto r = std::make_unique<Request>();
  r->id = 7;
  r->name = "r";
  r->prompt_tokens = prompt;
  r->max_output_tokens = outputs;
  instance->Arrive(std::move(r), 0);
  instance->RunUntil(kNever);
  EXPECT_EQ(instance->records().size(), 1u);
  if (!instance->records().empty()) out.record = instance->records().front();
  // Speculative steps go one by one (without speculation decodes go in bulk).
  if (setup.engine.speculative.enabled()) {
    EXPECT_EQ(instance->fast_decode_steps(), 0);
  }
  return out;
}

// The step cost of one speculative decode of 1 + k tokens over `context` cached tokens.
int64_t SpecStepNs(const EngineSetup& setup, int64_t context, int64_t query) {
  BatchShape shape;
  shape.AddSpeculativeDecode(context, query);
  return setup.cost->Cost(shape).total_ns;
}

// The synthetic hybrid bundle without its resolved block size (784 without speculation;
// speculation's wider conv state resolves 800).
void WriteBundle(testing::SyntheticBundle& bundle) {
  testing::WriteHybridBundle(bundle, {1});
  bundle.Meta("model: qwen3.8-27b\nhardware: H200-SXM\nsource: {kind: analytic}\n");
}

TEST(SpeculativeInstance, AtRateOneTpotIsTheStepTimeOverKPlusOne) {
  testing::SyntheticBundle bundle;
  WriteBundle(bundle);
  const EngineSetup setup = SpeculativeSetup(bundle.dir(), {1.0, 1.0});
  const OneRequest run = RunOne(setup, 100, 10);
  ASSERT_EQ(run.steps.size(), 4u);  // the prefill, then 3 steps of 3 tokens
  EXPECT_EQ(run.record.output_tokens, 10);
  SimTime decode_time = 0;
  for (std::size_t i = 1; i < 4; ++i) {
    const StepRecord& s = run.steps[i];
    EXPECT_EQ(s.generated_tokens, 3);
    EXPECT_EQ(s.draft_tokens, 2);
    EXPECT_EQ(s.accepted_tokens, 2);
    EXPECT_EQ(s.decodes, 1);
    EXPECT_EQ(s.prefill_tokens, 0);
    EXPECT_EQ(s.duration, SpecStepNs(setup, 100 + 3 * static_cast<int64_t>(i - 1), 3));
    decode_time += s.duration;
  }
  // TPOT = (finish - first token) / (outputs - 1) = 3 steps / 9 tokens: step time / 3.
  EXPECT_EQ(run.record.finish - run.record.first_token, decode_time);
}

TEST(SpeculativeInstance, AtRateZeroOneTokenPerStepAtTheLargerStepCost) {
  testing::SyntheticBundle bundle;
  WriteBundle(bundle);
  const EngineSetup spec = SpeculativeSetup(bundle.dir(), {0.0, 0.0});
  const EngineSetup plain = SpeculativeSetup(bundle.dir(), {});
  const OneRequest run = RunOne(spec, 100, 10);
  const OneRequest base = RunOne(plain, 100, 10);
  ASSERT_EQ(run.steps.size(), 10u);
  ASSERT_EQ(base.steps.size(), 10u);
  EXPECT_EQ(run.record.output_tokens, 10);
  for (std::size_t i = 1; i < 10; ++i) {
    const StepRecord& s = run.steps[i];
    EXPECT_EQ(s.generated_tokens, 1);
    EXPECT_EQ(s.draft_tokens, 2);
    EXPECT_EQ(s.accepted_tokens, 0);
    EXPECT_EQ(s.duration, SpecStepNs(spec, 99 + static_cast<int64_t>(i), 3));
    EXPECT_GT(s.duration, base.steps[i].duration);  // 3 query tokens and 2 draft passes
  }
  // The prefill step also runs the draft passes (vLLM drafts after every step).
  EXPECT_GT(run.steps[0].duration, base.steps[0].duration);
}

}  // namespace
}  // namespace fleetsim
