// A replay's per-tick series beside a run's (app/validate_series.h): each tick reads the
// state the last step ending by then left, and the KV cache's usage is compared only
// where the run recorded it.
#include "app/validate_series.h"

#include <optional>
#include <vector>

#include <gtest/gtest.h>

namespace fleetsim {
namespace {

VllmBenchTick Tick(double t_s, int64_t running, std::optional<double> kv_cache_pct) {
  VllmBenchTick tick;
  tick.t_s = t_s;
  tick.running = running;
  tick.kv_cache_pct = kv_cache_pct;
  return tick;
}

// Steps ending at 0.5, 1.5 and 2.5 s of the replay, with the pool at 10, 40 and 90 %.
SimulatedSeries ThreeSteps() {
  SimulatedSeries sim;
  sim.states = {{SecondsToSimTime(0.5), {1, 0, 0.10}},
                {SecondsToSimTime(1.5), {2, 0, 0.40}},
                {SecondsToSimTime(2.5), {3, 0, 0.90}}};
  return sim;
}

TEST(ValidateSeries, KvUsageIsTheLastStepsAtEachTickInPoints) {
  const std::vector<VllmBenchTick> ticks = {Tick(1, 1, 20.0), Tick(2, 2, 40.0), Tick(3, 3, 80.0)};
  const SeriesComparison c = CompareSeries(ticks, 1.0, SeriesOrigin{}, ThreeSteps());
  ASSERT_EQ(c.rows.size(), 3u);
  EXPECT_DOUBLE_EQ(c.rows[0].kv_cache_pct_sim, 10.0);
  EXPECT_DOUBLE_EQ(c.rows[1].kv_cache_pct_sim, 40.0);
  EXPECT_DOUBLE_EQ(c.rows[2].kv_cache_pct_sim, 90.0);
  EXPECT_EQ(c.rows[2].kv_cache_pct_measured, 80.0);
  ASSERT_TRUE(c.kv_cache);
  EXPECT_DOUBLE_EQ(c.kv_cache->mae, (10.0 + 0.0 + 10.0) / 3);
  EXPECT_DOUBLE_EQ(c.kv_cache->measured_mean, (20.0 + 40.0 + 80.0) / 3);
  EXPECT_FALSE(c.kv_cache_unrecorded);

  // The ticks' clock leads the replay's: at lead 0.6 s tick 1 ends at 0.4 s, before any step.
  SeriesOrigin lead;
  lead.lead_s = 0.6;
  const SeriesComparison led = CompareSeries(ticks, 1.0, lead, ThreeSteps());
  EXPECT_DOUBLE_EQ(led.rows[0].kv_cache_pct_sim, 0.0);
  EXPECT_DOUBLE_EQ(led.rows[1].kv_cache_pct_sim, 10.0);
}

// A column of zeros while requests ran is a harness that did not read the usage (the
// LLMServingSim bench runs before it read SchedulerStats.kv_cache_usage): not compared.
TEST(ValidateSeries, AKvColumnOfZerosWhileRequestsRanIsUnrecorded) {
  const std::vector<VllmBenchTick> zeros = {Tick(1, 1, 0.0), Tick(2, 2, 0.0), Tick(3, 0, 0.0)};
  const SeriesComparison c = CompareSeries(zeros, 1.0, SeriesOrigin{}, ThreeSteps());
  EXPECT_TRUE(c.kv_cache_unrecorded);
  EXPECT_FALSE(c.kv_cache);
  for (const SeriesRow& row : c.rows)
    EXPECT_FALSE(row.kv_cache_pct_measured);

  // Zeros with nothing running are a real reading; no column is no reading at all.
  const std::vector<VllmBenchTick> idle = {Tick(1, 0, 0.0), Tick(2, 0, 0.0)};
  const SeriesComparison quiet = CompareSeries(idle, 1.0, SeriesOrigin{}, ThreeSteps());
  EXPECT_FALSE(quiet.kv_cache_unrecorded);
  ASSERT_TRUE(quiet.kv_cache);
  EXPECT_DOUBLE_EQ(quiet.kv_cache->mae, (10.0 + 40.0) / 2);
  const std::vector<VllmBenchTick> none = {Tick(1, 1, std::nullopt)};
  const SeriesComparison absent = CompareSeries(none, 1.0, SeriesOrigin{}, ThreeSteps());
  EXPECT_FALSE(absent.kv_cache);
  EXPECT_FALSE(absent.kv_cache_unrecorded);
}

// Under async scheduling a step's end reports the next step's scheduled queues when that
// step follows at once; after a gap, or without async scheduling, the step's own.
TEST(ValidateSeries, AsyncStatsAtAStepsEndReadTheNextStepsScheduledQueues) {
  const auto at = [](double s) { return SecondsToSimTime(s); };
  const SimulatedSeries::Queues first_scheduled{4, 6, 0.50}, first_after{3, 6, 0.45};
  const SimulatedSeries::Queues second_scheduled{5, 4, 0.70}, second_after{5, 4, 0.72};
  const SimulatedSeries::Queues third_scheduled{1, 0, 0.10}, third_after{0, 0, 0.0};
  for (const bool async : {true, false}) {
    SCOPED_TRACE(async ? "async" : "sync");
    SimulatedSeries sim;
    sim.async_scheduling = async;
    sim.AddStep(at(0.0), at(0.4), first_scheduled, first_after);
    sim.AddStep(at(0.4), at(0.8), second_scheduled, second_after);  // back to back
    sim.AddStep(at(2.0), at(2.5), third_scheduled, third_after);    // after a gap
    const std::vector<VllmBenchTick> ticks = {
        Tick(0.6, 0, std::nullopt), Tick(1.5, 0, std::nullopt), Tick(2.2, 0, std::nullopt)};
    const SeriesComparison c = CompareSeries(ticks, 1.0, SeriesOrigin{}, sim);
    // At 0.6 s: the first step's end, where the second was already scheduled (async).
    EXPECT_EQ(c.rows[0].running_sim, async ? second_scheduled.running : first_after.running);
    EXPECT_EQ(c.rows[0].waiting_sim, async ? second_scheduled.waiting : first_after.waiting);
    EXPECT_DOUBLE_EQ(c.rows[0].kv_cache_pct_sim, async ? 70.0 : 45.0);
    // At 1.5 s and 2.2 s: idle after the second step; the third's scheduling reports only
    // at its end.
    EXPECT_EQ(c.rows[1].running_sim, second_after.running);
    EXPECT_DOUBLE_EQ(c.rows[2].kv_cache_pct_sim, 72.0);
  }
}

}  // namespace
}  // namespace fleetsim
