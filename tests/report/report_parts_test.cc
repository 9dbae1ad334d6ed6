// The report's pieces that need no browser: how series are thinned, how runs are named,
// where latency curves are sampled, and that every chart spec is one valid JSON object.
#include <cstring>
#include <string>

#include <gtest/gtest.h>

#include "core/json_object.h"
#include "report/chart_specs.h"
#include "report/report_page.h"
#include "report/run_digest.h"

namespace fleetsim::report {
namespace {

output::TimeseriesRow Row(const char* group, double time_s, int64_t running, double kv) {
  output::TimeseriesRow row{};
  std::strncpy(row.group, group, sizeof row.group);
  row.time_s = time_s;
  row.running = running;
  row.kv_usage = kv;
  row.generation_tokens_per_s = 10 * time_s;
  return row;
}

TEST(ThinTimeseries, AveragesConsecutiveRowsOfEachGroup) {
  std::vector<output::TimeseriesRow> rows;
  for (int t = 0; t < 5; ++t)
    rows.push_back(Row("a", t, t, 0.1 * t));
  rows.push_back(Row("fleet", 0, 7, 0.5));
  // At most 2 points per group: strides of 3 rows -> a: {0,1,2}, {3,4}; fleet: one row.
  const auto thin = ThinTimeseries(rows, 2);
  ASSERT_EQ(thin.size(), 3u);
  EXPECT_STREQ(thin[0].group, "a");
  EXPECT_EQ(thin[0].time_s, 0);   // the bucket's first start
  EXPECT_EQ(thin[0].running, 1);  // (0 + 1 + 2) / 3
  EXPECT_DOUBLE_EQ(thin[0].kv_usage, 0.1);
  EXPECT_DOUBLE_EQ(thin[0].generation_tokens_per_s, 10);
  EXPECT_EQ(thin[1].time_s, 3);
  EXPECT_EQ(thin[1].running, 4);  // (3 + 4) / 2 = 3.5, rounded half away from zero
  EXPECT_STREQ(thin[2].group, "fleet");
  EXPECT_EQ(thin[2].running, 7);
  // Short series pass unchanged.
  EXPECT_EQ(ThinTimeseries(rows, 1500).size(), rows.size());
}

TEST(CurveFractions, RunFromZeroToOneWithTheTailSampledFinely) {
  const auto& f = CurveFractions();
  ASSERT_EQ(f.size(), 103u);
  EXPECT_EQ(f.front(), 0.0);
  EXPECT_EQ(f.back(), 1.0);
  for (std::size_t i = 1; i < f.size(); ++i)
    EXPECT_LT(f[i - 1], f[i]);
  EXPECT_DOUBLE_EQ(f[99], 0.99);
  EXPECT_DOUBLE_EQ(f[101], 0.999);
}

TEST(RunLabels, AreStemsUnlessTwoAreEqual) {
  EXPECT_EQ(RunLabels({"out/a.h5", "out/b.h5"}), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(RunLabels({"x/points/point-0.h5", "y/points/point-0.h5", "z/c.h5"}),
            (std::vector<std::string>{"points/point-0", "points/point-0 #2", "c"}));
  EXPECT_EQ(RunLabels({"one/run.h5", "two/run.h5"}),
            (std::vector<std::string>{"one/run", "two/run"}));
}

TEST(ChartSpecs, AreEachOneJsonObjectReadingItsDataset) {
  const std::vector<Chart> charts = {LatencyChart("TTFT"),
                                     TimeChart("kv_usage", "KV", "used", true),
                                     InstanceChart("requests", "Requests", "requests", false),
                                     GroupChart("goodput_rps", "Goodput", "req/s", false),
                                     SweepRankingChart("goodput_per_gpu"),
                                     SweepAxisChart("tp", false)};
  for (const Chart& chart : charts) {
    SCOPED_TRACE(chart.id);
    JsonObject spec;
    std::string error;
    ASSERT_TRUE(spec.Parse(chart.spec, error)) << error << "\n" << chart.spec;
    const JsonValue* data = spec.Find("data");
    ASSERT_NE(data, nullptr);
    EXPECT_NE(std::string(data->raw).find("\"name\":\"" + chart.dataset + "\""), std::string::npos)
        << data->raw;
    EXPECT_NE(spec.Find("$schema"), nullptr);
  }
}

}  // namespace
}  // namespace fleetsim::report
