// A vLLM-bench run's per-tick series (workload/vllm_bench_series.h): reading it, and
// finding the instant its ticks count from out of its own prompt-token column.
#include "workload/vllm_bench_series.h"

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/input_error.h"
#include "support/temp_file.h"

namespace fleetsim {
namespace {

// First tokens at random instants from 1 s to `seconds`, prompts of 1 to 4,000 tokens.
std::vector<FirstToken> RandomFirstTokens(int n, double seconds, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> at(1.0, seconds);  // none before the first tick
  std::uniform_int_distribution<int64_t> prompt(1, 4000);
  std::vector<FirstToken> out;
  for (int i = 0; i < n; ++i)
    out.push_back({at(rng), prompt(rng)});
  return out;
}

// The prompt-token column a run whose ticks start `lead_s` before time 0 would write:
// tick k holds the first tokens in (k - 1, k] ticks on its clock.
std::vector<VllmBenchTick> TicksOf(const std::vector<FirstToken>& first_tokens, double lead_s,
                                   double tick_s, int ticks) {
  std::vector<VllmBenchTick> out(static_cast<std::size_t>(ticks));
  for (int k = 0; k < ticks; ++k) {
    out[static_cast<std::size_t>(k)].t_s = (k + 1) * tick_s;
    out[static_cast<std::size_t>(k)].prompt_tokens_per_s = 0.0;
  }
  for (const FirstToken& f : first_tokens) {
    const auto k = static_cast<int>(std::ceil((f.seconds + lead_s) / tick_s)) - 1;
    *out[static_cast<std::size_t>(k)].prompt_tokens_per_s +=
        static_cast<double>(f.prompt_tokens) / tick_s;
  }
  return out;
}

TEST(VllmBenchSeries, TheOriginIsWhereTheRunsPromptCountsMeetItsFirstTokens) {
  const std::vector<FirstToken> first = RandomFirstTokens(3000, 58, 7);
  for (const double lead : {0.137, 0.0, -0.25, 0.9}) {
    const SeriesOrigin origin = FindSeriesOrigin(TicksOf(first, lead, 1.0, 60), 1.0, first);
    EXPECT_TRUE(origin.from_prompt_column);
    EXPECT_NEAR(origin.lead_s, lead, 0.01) << lead;
    EXPECT_EQ(origin.prompt_mismatch, 0) << lead;
  }
  // Ticks of half a second.
  const SeriesOrigin half = FindSeriesOrigin(TicksOf(first, 0.31, 0.5, 120), 0.5, first);
  EXPECT_NEAR(half.lead_s, 0.31, 0.01);
}

TEST(VllmBenchSeries, AColumnThatDisagreesSaysByHowMuch) {
  const std::vector<FirstToken> first = RandomFirstTokens(3000, 58, 11);
  std::vector<VllmBenchTick> ticks = TicksOf(first, 0.1, 1.0, 60);
  double total = 0;
  for (const VllmBenchTick& t : ticks)
    total += *t.prompt_tokens_per_s;
  // 1,000 tokens counted a tick late.
  *ticks[10].prompt_tokens_per_s -= 1000;
  *ticks[11].prompt_tokens_per_s += 1000;
  const SeriesOrigin origin = FindSeriesOrigin(ticks, 1.0, first);
  EXPECT_NEAR(origin.lead_s, 0.1, 0.01);
  EXPECT_NEAR(origin.prompt_mismatch, 1000 / total, 1e-12);
}

TEST(VllmBenchSeries, WithoutAPromptColumnTheTicksStartAtTheFirstIntake) {
  const std::vector<FirstToken> first = RandomFirstTokens(100, 10, 3);
  std::vector<VllmBenchTick> ticks = TicksOf(first, 0.2, 1.0, 12);
  ticks[4].prompt_tokens_per_s.reset();
  const SeriesOrigin origin = FindSeriesOrigin(ticks, 1.0, first);
  EXPECT_FALSE(origin.from_prompt_column);
  EXPECT_EQ(origin.lead_s, 0);
  EXPECT_FALSE(FindSeriesOrigin(TicksOf(first, 0.2, 1.0, 12), 1.0, {}).from_prompt_column);
}

TEST(VllmBenchSeries, ReadsEveryTickAndItsOptionalColumns) {
  const testing::TempFile file("timeseries.csv",
                               "t,prompt_throughput,gen_throughput,running,waiting,kv_cache_pct\n"
                               "1.0,9372.0,92.0,9,0,13.22\n"
                               "2.0,0,353.5,19,2,0.0\n");
  const std::vector<VllmBenchTick> ticks = ReadVllmBenchSeries(file.path());
  ASSERT_EQ(ticks.size(), 2u);
  EXPECT_EQ(ticks[1].t_s, 2.0);
  EXPECT_EQ(ticks[1].running, 19);
  EXPECT_EQ(ticks[1].waiting, 2);
  EXPECT_EQ(ticks[0].prompt_tokens_per_s, 9372.0);
  EXPECT_EQ(ticks[1].generated_tokens_per_s, 353.5);
  EXPECT_EQ(ticks[0].kv_cache_pct, 13.22);
  EXPECT_EQ(ticks[1].kv_cache_pct, 0.0);

  const testing::TempFile bare("timeseries.csv", "t,running,waiting\n1,3,4\n");
  const std::vector<VllmBenchTick> plain = ReadVllmBenchSeries(bare.path());
  ASSERT_EQ(plain.size(), 1u);
  EXPECT_FALSE(plain[0].prompt_tokens_per_s);
  EXPECT_FALSE(plain[0].generated_tokens_per_s);
  EXPECT_FALSE(plain[0].kv_cache_pct);
}

TEST(VllmBenchSeries, BadValuesAreErrorsAtTheirLineAndColumn) {
  const testing::TempFile negative("timeseries.csv", "t,running,waiting\n1,3,4\n2,-1,0\n");
  const InputError e = testing::CatchInputError([&] { ReadVllmBenchSeries(negative.path()); });
  EXPECT_EQ(e.line(), 3);
  EXPECT_EQ(e.field(), "running");

  const testing::TempFile rate("timeseries.csv", "t,running,waiting,gen_throughput\n1,3,4,-5\n");
  EXPECT_EQ(testing::CatchInputError([&] { ReadVllmBenchSeries(rate.path()); }).field(),
            "gen_throughput");

  for (const char* usage : {"-1", "100.5", "nan"}) {
    const testing::TempFile kv(
        "timeseries.csv", std::string("t,running,waiting,kv_cache_pct\n1,3,4,") + usage + "\n");
    EXPECT_EQ(testing::CatchInputError([&] { ReadVllmBenchSeries(kv.path()); }).field(),
              "kv_cache_pct")
        << usage;
  }

  const testing::TempFile missing("timeseries.csv", "t,running\n1,3\n");
  EXPECT_TRUE(testing::Mentions(
      testing::CatchInputError([&] { ReadVllmBenchSeries(missing.path()); }), "waiting"));

  const testing::TempFile endless("timeseries.csv", "t,running,waiting\ninf,3,4\n");
  EXPECT_EQ(testing::CatchInputError([&] { ReadVllmBenchSeries(endless.path()); }).field(), "t");
}

}  // namespace
}  // namespace fleetsim
