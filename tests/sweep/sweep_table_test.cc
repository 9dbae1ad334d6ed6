// The aggregate table: objectives from a point's results, ranks, the printed margin, and
// the CSV and HDF5 forms holding the same rows.
#include "sweep/sweep_table.h"

#include <cmath>
#include <cstring>

#include <gtest/gtest.h>

#include "output/table_reader.h"
#include "sweep/sweep_fixture.h"
#include "sweep/sweep_report.h"

namespace fleetsim {
namespace {

using testing::SweepDir;

PointResult Result(double goodput, double attainment, int64_t gpus, double cost,
                   double rate_scale = 1) {
  PointResult r;
  r.fleet.goodput_rps = goodput;
  r.fleet.slo_attainment = attainment;
  r.gpus = gpus;
  r.cost_per_hour_usd = cost;
  r.rate_scale = rate_scale;
  r.hardware = "H100-SXM";
  r.policy = "least_outstanding";
  r.block_size = 784;
  r.attention_backend = "ROCM_ATTN";
  r.decode_kernel = "triton_paged_attention_2d";
  return r;
}

SweepSpec Spec(SweepObjective objective) {
  SweepSpec spec;
  spec.objective = objective;
  spec.rate_search.attainment_target = 0.9;
  return spec;
}

TEST(SweepTable, ObjectivesOfAPoint) {
  const PointResult r = Result(12, 0.95, 8, 24, 2.5);
  const SweepRow per_gpu = SweepRowOf(3, r, Spec(SweepObjective::kGoodputPerGpu));
  EXPECT_EQ(per_gpu.point, 3);
  EXPECT_DOUBLE_EQ(per_gpu.goodput_per_gpu, 1.5);
  EXPECT_DOUBLE_EQ(per_gpu.goodput_per_dollar, 12 * 3600.0 / 24);  // requests per dollar
  EXPECT_TRUE(std::isnan(per_gpu.max_rate_scale));
  EXPECT_EQ(per_gpu.objective, per_gpu.goodput_per_gpu);
  EXPECT_STREQ(per_gpu.hardware, "H100-SXM");

  const SweepRow per_dollar = SweepRowOf(3, r, Spec(SweepObjective::kGoodputPerDollar));
  EXPECT_EQ(per_dollar.objective, per_dollar.goodput_per_dollar);

  // max_rate: the kept run's scale when it passes, 0 when even the lowest failed.
  EXPECT_EQ(SweepRowOf(0, r, Spec(SweepObjective::kMaxRate)).objective, 2.5);
  const SweepRow failed =
      SweepRowOf(0, Result(1, 0.5, 8, 24, 0.25), Spec(SweepObjective::kMaxRate));
  EXPECT_EQ(failed.max_rate_scale, 0.0);
  EXPECT_EQ(failed.rate_scale, 0.25);
}

TEST(SweepTable, RanksHighestFirstTiesToTheLowerPointNaNLast) {
  std::vector<SweepRow> rows(5);
  const double objectives[] = {1.0, NAN, 3.0, 1.0, 2.0};
  for (std::size_t i = 0; i < rows.size(); ++i) {
    rows[i].point = static_cast<int64_t>(i);
    rows[i].objective = objectives[i];
  }
  RankRows(rows);
  std::vector<int64_t> ranks;
  for (const SweepRow& r : rows)
    ranks.push_back(r.rank);
  EXPECT_EQ(ranks, (std::vector<int64_t>{3, 5, 1, 4, 2}));
}

TEST(SweepTable, RankingPrintsTheBestAndItsMargin) {
  SweepSpec spec = Spec(SweepObjective::kGoodputPerGpu);
  std::vector<SweepPoint> points(3);
  std::vector<SweepRow> rows;
  const double goodput[] = {8, 10, 2};
  for (int i = 0; i < 3; ++i) {
    points[static_cast<std::size_t>(i)].index = i;
    points[static_cast<std::size_t>(i)].tp = i + 1;
    rows.push_back(SweepRowOf(i, Result(goodput[i], 1, 4, 10), spec));
  }
  RankRows(rows);
  const std::string text = Ranking(rows, points, spec);
  EXPECT_NE(text.find("best: point 1 (tp=2) goodput_per_gpu 2.5, ahead of the next (point 0) by "
                      "25.0 %"),
            std::string::npos)
      << text;
  // Ranked order in the table, and a cut at `top`.
  EXPECT_LT(text.find("tp=2\n"), text.find("tp=1\n"));
  EXPECT_NE(Ranking(rows, points, spec, 2).find("(1 more in sweep.csv)"), std::string::npos);
  rows.resize(1);
  EXPECT_NE(Ranking(rows, points, spec).find("(the only point)"), std::string::npos);
}

TEST(SweepTable, CsvAndHdf5HoldTheSameRows) {
  SweepDir dir("table-files");
  const SweepSpec spec = Spec(SweepObjective::kGoodputPerGpu);
  std::vector<SweepRow> rows = {SweepRowOf(0, Result(3, 1, 2, 5), spec),
                                SweepRowOf(1, Result(4, 0.5, 2, 5), spec)};
  RankRows(rows);
  WriteSweepCsv(dir.dir() / "sweep.csv", rows);
  WriteSweepHdf5(dir.dir() / "sweep.h5", rows, spec);
  const std::string csv = testing::ReadText(dir.dir() / "sweep.csv");
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "point,tp,dp,replicas,gpus,hardware,prefix_caching,max_num_batched_tokens,max_num_seqs,"
            "block_size,attention_backend,decode_kernel,policy,capacity_weighted,rate_scale,"
            "requests,finished,throughput_rps,goodput_rps,"
            "slo_attainment,ttft_p99_s,tpot_p99_s,goodput_per_gpu,cost_per_hour_usd,"
            "goodput_per_dollar,max_rate_scale,objective,rank");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 3);

  const output::TableRows back = output::ReadTable(dir.Path("sweep.h5"), "/sweep", SweepSchema());
  ASSERT_EQ(back.count, 2);
  for (int64_t i = 0; i < 2; ++i) {
    const SweepRow& r = back.at<SweepRow>(i);
    EXPECT_EQ(r.point, i);
    EXPECT_EQ(r.rank, i == 0 ? 2 : 1);
    EXPECT_STREQ(r.policy, "least_outstanding");
    EXPECT_EQ(r.block_size, 784);
    EXPECT_STREQ(r.attention_backend, "ROCM_ATTN");
    EXPECT_STREQ(r.decode_kernel, "triton_paged_attention_2d");
    EXPECT_EQ(r.goodput_rps, rows[static_cast<std::size_t>(i)].goodput_rps);
  }
}

}  // namespace
}  // namespace fleetsim
