// StepCostModel::DecodeRun (the step costs of the engine's event-driven decode) must give
// what StepCostModel::Cost gives for the same decode-only batch, to the nanosecond, and
// count the same lookups outside the grid -- on analytic bundles of a dense model, a
// hybrid, a MoE model and a hybrid MoE, at TP 1 and above (collectives), inside and past
// the tables' ranges, with every context equal and with mixed ones (the skew correction),
// whether a run keeps one batch size or one run moves through them all (as an instance's).
#include <filesystem>
#include <random>
#include <string>
#include <unistd.h>

#include <gtest/gtest.h>

#include "bundles/analytic_bundle.h"
#include "core/project_paths.h"
#include "engine/engine_setup.h"
#include "engine/test_models.h"
#include "model/hardware.h"

namespace fleetsim {
namespace {

namespace fs = std::filesystem;

EngineSetup EngineOn(const std::string& model, const HardwareSpec& gpu, int tp,
                     const fs::path& dir) {
  EngineConfig config;
  config.tensor_parallel_size = tp;
  KvBudget budget;
  budget.num_blocks = 1000;
  budget.hardware = gpu;  // its links, for the collectives
  return BuildEngineSetup(testing::Card(model), LoadBundle(dir), config, budget, 2'500,
                          testing::SettingErrorFor);
}

TEST(DecodeRunCost, EqualsTheStepCostOfEveryDecodeStep) {
  const fs::path scratch =
      fs::temp_directory_path() / ("fleetsim-decode-run-" + std::to_string(::getpid()));
  fs::remove_all(scratch);
  struct Case {
    std::string model, gpu;
    int tp;
  };
  const Case cases[] = {{"llama-3.1-8b", "H100-SXM", 1},  {"llama-3.1-8b", "A100-SXM-80GB", 2},
                        {"qwen3.8-27b", "H200-SXM", 1},   {"qwen3.8-27b", "H200-SXM", 4},
                        {"qwen3-30b-a3b", "H100-SXM", 2}, {"qwen3-next-80b-a3b", "H200-SXM", 4}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.model + " on " + c.gpu + " TP " + std::to_string(c.tp));
    const fs::path dir = scratch / (c.model + "-" + c.gpu + "-" + std::to_string(c.tp));
    const HardwareSpec gpu = LoadHardware(HardwareCatalogDir(), c.gpu);
    WriteAnalyticBundle(testing::Card(c.model), gpu, {c.tp}, dir.string());
    // Two models over their own copies of the tables: out-of-grid counts compare too.
    const EngineSetup by_step = EngineOn(c.model, gpu, c.tp, dir);
    const EngineSetup by_run = EngineOn(c.model, gpu, c.tp, dir);
    const EngineSetup by_moving = EngineOn(c.model, gpu, c.tp, dir);
    StepCostModel::DecodeRun moving(*by_moving.cost);  // set to each size in turn
    std::mt19937_64 rng(static_cast<uint64_t>(c.tp));
    // Batch sizes from one to past the tables' largest; contexts from one token to past
    // the longest, growing by one per decode each step, then in no order at all.
    for (const int64_t decodes : {1, 2, 3, 7, 64, 255, 1024, 9000}) {
      StepCostModel::DecodeRun run(*by_run.cost, decodes);
      moving.SetDecodes(decodes);
      // Both runs, against Cost of the same batch.
      const auto expect_cost = [&](int64_t context_sum, int64_t lo, int64_t hi) {
        BatchShape batch;
        batch.AddDecodes(decodes, context_sum, lo, hi);
        const int64_t expected = by_step.cost->Cost(batch).total_ns;
        EXPECT_EQ(run.TotalNs(context_sum, lo, hi), expected)
            << decodes << " decodes from " << lo << " to " << hi << " summing " << context_sum;
        EXPECT_EQ(moving.TotalNs(context_sum, lo, hi), expected) << "one run for every size";
      };
      for (const int64_t context : {1, 100, 4'000, 130'000, 3'000'000}) {
        for (int64_t step = 0; step < 40; ++step) {
          expect_cost(decodes * (context + step), context + step, context + step);
        }
        if (::testing::Test::HasFailure()) return;
      }
      // Mixed contexts (the skew correction of the analytic bundles' skew table): the
      // shortest and longest drawn, the others anywhere between them.
      for (int i = 0; i < 40; ++i) {
        const int64_t lo = 1 + static_cast<int64_t>(rng() % 200'000);
        const int64_t hi = decodes == 1 ? lo : lo + static_cast<int64_t>(rng() % 200'000);
        const int64_t others = decodes > 2 ? decodes - 2 : 0;
        const int64_t middle =
            others * lo +
            static_cast<int64_t>(rng() % static_cast<uint64_t>(others * (hi - lo) + 1));
        const int64_t context_sum = decodes == 1 ? lo : lo + hi + middle;
        // Then the steps of a run from there: every context one longer each step, so that
        // the skew bucket mostly stays and sometimes moves.
        for (int64_t step = 0; step < (i % 8 == 0 ? 600 : 1); ++step)
          expect_cost(context_sum + decodes * step, lo + step, hi + step);
        // Steps of the same batch size where only some of the three move (a lane finishing
        // as another joins), each after the step it moves from: the skew rate moves, so the
        // alpha kept for a run's steps must be found again.
        if (others > 0 && hi > lo) {
          const int64_t k = hi - lo;
          const int64_t moved[][3] = {
              {context_sum + decodes * k, lo, hi + k},                // the shortest stays
              {lo + hi + 2 * k + others * (hi + k), lo + k, hi + k},  // the mean moves
              {context_sum + decodes * k, lo + k, hi}};               // the longest stays
          for (const auto& [sum, shortest, longest] : moved) {
            expect_cost(context_sum, lo, hi);
            expect_cost(sum, shortest, longest);
          }
        }
        if (::testing::Test::HasFailure()) return;
      }
    }
    EXPECT_GT(by_step.cost->OutOfGridLookups(), 0);  // the far ends left the grid
    EXPECT_EQ(by_run.cost->OutOfGridLookups(), by_step.cost->OutOfGridLookups());
    EXPECT_EQ(by_moving.cost->OutOfGridLookups(), by_step.cost->OutOfGridLookups());
  }
  fs::remove_all(scratch);
}

}  // namespace
}  // namespace fleetsim
