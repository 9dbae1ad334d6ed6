// `fleetsim sweep` as a user runs it, on a tiny fleet (Llama-3.1-8B on H100s, analytic
// bundle): --list, a full sweep whose point equals a standalone `fleetsim run` of it byte
// for byte, --point then --collect giving the full sweep's aggregate, errors in one line
// with exit 2, and a max_rate search whose kept run is its highest passing one.
#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <sstream>

#include <gtest/gtest.h>

#include "perf/synthetic_bundle.h"
#include "support/csv_rows.h"
#include "support/run_command.h"
#include "sweep/sweep_fixture.h"

namespace fleetsim {
namespace {

namespace fs = std::filesystem;
using testing::ReadText;
using testing::RunFleetsim;
using testing::SweepDir;

// Two points: 4 x TP 1 and 2 x TP 2, routed by power_of_two (the seed matters), arrivals
// 1.5 x denser, the first 150 requests.
constexpr const char* kTwoPointSpec = R"(name: two
base: cluster.yaml
workload: traffic.yaml
window: {num_requests: 150}
seed: 7
gpu_budget: 4
axes:
  tp: [1, 2]
  policy: [power_of_two]
  rate_scale: [1.5]
)";

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::stringstream in(text);
  for (std::string line; std::getline(in, line);)
    lines.push_back(line);
  return lines;
}

// One full sweep of kTwoPointSpec, shared by the tests that compare against it.
class SweepCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::make_unique<SweepDir>("cli");
    spec_ = dir_->Write("two.yaml", kTwoPointSpec);
    full_ = RunFleetsim("sweep " + spec_ + " --output-dir " + dir_->Path("full"));
  }
  static void TearDownTestSuite() { dir_.reset(); }

  static std::unique_ptr<SweepDir> dir_;
  static std::string spec_;
  static testing::CommandResult full_;
};

std::unique_ptr<SweepDir> SweepCli::dir_;
std::string SweepCli::spec_;
testing::CommandResult SweepCli::full_;

TEST_F(SweepCli, FullSweepWritesEveryPointTheAggregateAndTheRanking) {
  ASSERT_EQ(full_.exit_code, 0) << full_.err;
  for (int k = 0; k < 2; ++k) {
    EXPECT_TRUE(fs::exists(dir_->dir() / "full/points" / ("point-" + std::to_string(k) + ".yaml")));
    EXPECT_TRUE(fs::exists(dir_->dir() / "full/points" / ("point-" + std::to_string(k) + ".h5")));
  }
  EXPECT_NE(full_.out.find("point 1 (tp=2 replicas=2 policy=power_of_two rate_scale=1.5)"),
            std::string::npos)
      << full_.out;
  EXPECT_NE(full_.out.find("\nbest: point "), std::string::npos) << full_.out;
  EXPECT_NE(full_.out.find("ahead of the next (point "), std::string::npos) << full_.out;
  const auto rows = testing::ReadCsvRows(dir_->dir() / "full/sweep.csv");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].at("tp"), "1");
  EXPECT_EQ(rows[0].at("replicas"), "4");
  EXPECT_EQ(rows[1].at("tp"), "2");
  EXPECT_EQ(rows[1].at("replicas"), "2");
  for (const auto& row : rows) {
    EXPECT_EQ(row.at("gpus"), "4");
    EXPECT_EQ(row.at("policy"), "power_of_two");
    EXPECT_EQ(row.at("rate_scale"), "1.5");
    EXPECT_EQ(row.at("requests"), "150");
    EXPECT_EQ(row.at("max_rate_scale"), "");  // NaN: not a max_rate sweep
    EXPECT_EQ(row.at("objective"), row.at("goodput_per_gpu"));
    // What the engine resolves on the point's GPU (issue 18): vLLM's default block of 16,
    // and on an H100 (SM 9.0) FLASH_ATTN, first in vLLM's CUDA order, decoding with
    // FlashAttention 3 (head size 128, bf16 KV).
    EXPECT_EQ(row.at("block_size"), "16");
    EXPECT_EQ(row.at("attention_backend"), "FLASH_ATTN");
    EXPECT_EQ(row.at("decode_kernel"), "flash_attn_3");
  }
  EXPECT_NE(rows[0].at("rank"), rows[1].at("rank"));
  EXPECT_TRUE(fs::exists(dir_->dir() / "full/sweep.h5"));
}

TEST_F(SweepCli, APointGivesTheSameRequestsAsAStandaloneRunOfIt) {
  ASSERT_EQ(full_.exit_code, 0) << full_.err;
  const fs::path point = dir_->dir() / "full/points/point-1.yaml";
  const auto run = RunFleetsim(
      "run --quiet --cluster " + point.string() + " --workload " + dir_->Path("traffic.yaml") +
      " --rate-scale 1.5 --seed 7 --num-reqs 150 --output " + dir_->Path("standalone.h5"));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  fs::create_directories(dir_->dir() / "csv");
  fs::copy_file(dir_->dir() / "full/points/point-1.h5", dir_->dir() / "csv/point-1.h5");
  for (const std::string& file : {dir_->Path("standalone.h5"), dir_->Path("csv/point-1.h5")}) {
    const auto exported = RunFleetsim("export --csv " + file);
    ASSERT_EQ(exported.exit_code, 0) << exported.err;
  }
  const std::string standalone = ReadText(dir_->dir() / "standalone.requests.csv");
  EXPECT_EQ(std::count(standalone.begin(), standalone.end(), '\n'), 151);
  EXPECT_TRUE(standalone == ReadText(dir_->dir() / "csv/point-1.requests.csv"))
      << "/requests of point 1 differs from `fleetsim run` of its config";
}

TEST_F(SweepCli, PointThenCollectEqualsTheFullSweep) {
  ASSERT_EQ(full_.exit_code, 0) << full_.err;
  const std::string out = " --output-dir " + dir_->Path("split");
  for (int k : {1, 0}) {
    const auto r = RunFleetsim("sweep " + spec_ + out + " --quiet --point " + std::to_string(k));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
  EXPECT_FALSE(fs::exists(dir_->dir() / "split/sweep.csv"));  // --point writes no aggregate
  const auto collect = RunFleetsim("sweep " + spec_ + out + " --collect");
  ASSERT_EQ(collect.exit_code, 0) << collect.err;
  EXPECT_NE(collect.out.find("best: point"), std::string::npos) << collect.out;
  EXPECT_EQ(ReadText(dir_->dir() / "split/sweep.csv"), ReadText(dir_->dir() / "full/sweep.csv"));
  EXPECT_EQ(ReadText(dir_->dir() / "split/points/point-0.yaml"),
            ReadText(dir_->dir() / "full/points/point-0.yaml"));
}

TEST_F(SweepCli, CollectNamesTheMissingPointFiles) {
  fs::create_directories(dir_->dir() / "partial/points");
  dir_->Write("partial/points/point-0.yaml", "x");
  const auto r = RunFleetsim("sweep " + spec_ + " --collect --output-dir " + dir_->Path("partial"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("missing point files: points/point-0.h5, points/point-1.yaml, "
                       "points/point-1.h5"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(dir_->dir() / "partial/sweep.csv"));
}

TEST_F(SweepCli, ListPrintsThePointCountFirst) {
  const std::string spec =
      dir_->Write("list.yaml",
                  "base: cluster.yaml\nworkload: traffic.yaml\ngpu_budget: 4\n"
                  "axes: {tp: [1, 3, 2], enable_prefix_caching: [true, false]}\n");
  const auto r = RunFleetsim("sweep " + spec + " --list");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Lines(r.out), (std::vector<std::string>{
                              "points: 4",
                              "point 0: tp=1 replicas=4 prefix_caching=true",
                              "point 1: tp=1 replicas=4 prefix_caching=false",
                              "point 2: tp=2 replicas=2 prefix_caching=true",
                              "point 3: tp=2 replicas=2 prefix_caching=false",
                              "skipped: tp=3 prefix_caching=true: gpu_budget 4 is not a "
                              "multiple of TP 3",
                              "skipped: tp=3 prefix_caching=false: gpu_budget 4 is not a "
                              "multiple of TP 3",
                          }));
  EXPECT_FALSE(fs::exists(dir_->dir() / "out"));  // --list writes nothing
}

TEST_F(SweepCli, BadInputIsOneLineAndExitTwo) {
  const std::string bad =
      dir_->Write("bad.yaml",
                  "base: cluster.yaml\nworkload: traffic.yaml\naxes:\n  tp: [1, 2]\n"
                  "  policy: [least_outstanding, fastest]\n");
  struct Case {
    std::string args, mention;
  };
  const Case cases[] = {
      {"sweep " + bad, "bad.yaml:5: axes.policy[1]: unknown routing policy 'fastest'"},
      {"sweep " + spec_ + " --point 2", "--point: no point 2: the sweep has 2 (0-1)"},
      {"sweep " + spec_ + " --point 0 --collect", "--point: not with --collect"},
      {"sweep " + spec_ + " --threads 0", "--threads: must be at least 1"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.args);
    const auto r = RunFleetsim(c.args + " --output-dir " + dir_->Path("bad_out"));
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find(c.mention), std::string::npos) << r.err;
  }
  EXPECT_FALSE(fs::exists(dir_->dir() / "bad_out"));
}

// Point 1 asks the bundle for TP 2, which it lacks: the sweep fails naming the point and
// its file, and writes no aggregate. Point 0 runs on the base's relative bundle: path
// rewriting works.
TEST_F(SweepCli, AFailingPointFailsTheSweep) {
  testing::SyntheticBundle bundle;
  testing::WriteDenseBundle(bundle);  // TP 1 only
  fs::copy(bundle.dir(), dir_->dir() / "tp1_bundle", fs::copy_options::recursive);
  dir_->Write("tp1.yaml",
              "instance_groups:\n  - {name: llama, model: llama-3.1-8b, hardware: H100-SXM,"
              " bundle: tp1_bundle, engine: {num_gpu_blocks: 2000}}\n");
  const std::string spec =
      dir_->Write("failing.yaml",
                  "base: tp1.yaml\nworkload: traffic.yaml\nwindow: {num_requests: 20}\n"
                  "axes: {tp: [1, 2]}\n");
  const auto r = RunFleetsim("sweep " + spec + " --output-dir " + dir_->Path("failing"));
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("point 1 (tp=2, "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("failing/points/point-1.yaml): "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("no tables for TP 2"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::exists(dir_->dir() / "failing/points/point-0.h5"));
  EXPECT_FALSE(fs::exists(dir_->dir() / "failing/points/point-1.h5"));
  EXPECT_FALSE(fs::exists(dir_->dir() / "failing/sweep.csv"));
}

// A tight TTFT target on two instances: attainment falls as arrivals get denser, so every
// passing rate lies below every failing one, and the kept run is the highest that passed.
TEST_F(SweepCli, MaxRateKeepsTheHighestPassingRun) {
  dir_->Write("tight.yaml",
              std::string(testing::kTinyCluster) + "slo: {ttft_s: 0.3, tpot_s: 0.1}\n");
  const std::string spec = dir_->Write("capacity.yaml",
                                       "base: tight.yaml\nworkload: traffic.yaml\n"
                                       "objective:\n  kind: max_rate\n  attainment_target: 0.9\n"
                                       "  rate_scale: {low: 1, high: 64, iterations: 3}\n");
  const auto r = RunFleetsim("sweep " + spec + " --output-dir " + dir_->Path("capacity"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  double max_pass = 0, min_fail = 1e300;
  int runs = 0;
  for (const std::string& line : Lines(r.out)) {
    const std::string prefix = "point 0: rate_scale ";
    if (line.rfind(prefix, 0) != 0) continue;
    ++runs;
    const double rate = std::stod(line.substr(prefix.size()));
    if (line.ends_with("-> pass")) max_pass = std::max(max_pass, rate);
    if (line.ends_with("-> fail")) min_fail = std::min(min_fail, rate);
  }
  EXPECT_EQ(runs, 5) << r.out;  // low, high, 3 bisection steps
  EXPECT_GT(max_pass, 1.0) << r.out;
  EXPECT_LT(max_pass, min_fail) << r.out;
  EXPECT_LT(min_fail, 64.0) << r.out;
  const auto rows = testing::ReadCsvRows(dir_->dir() / "capacity/sweep.csv");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_NEAR(std::stod(rows[0].at("max_rate_scale")), max_pass, 1e-5 * max_pass);
  EXPECT_EQ(rows[0].at("rate_scale"), rows[0].at("max_rate_scale"));
  EXPECT_EQ(rows[0].at("objective"), rows[0].at("max_rate_scale"));
  EXPECT_GE(std::stod(rows[0].at("slo_attainment")), 0.9);
  EXPECT_FALSE(fs::exists(dir_->dir() / "capacity/points/point-0.probe.h5"));
}

}  // namespace
}  // namespace fleetsim
