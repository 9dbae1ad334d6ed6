// Running points with a stand-in for the simulation whose SLO attainment is a known
// function of the rate scale, so the max_rate bisection's every step can be worked out by
// hand; the kept file is always the run at the highest passing rate.
#include "sweep/sweep_runner.h"

#include <cmath>
#include <cstdio>

#include <gtest/gtest.h>

#include "core/input_error.h"
#include "sweep/sweep_fixture.h"

namespace fleetsim {
namespace {

namespace fs = std::filesystem;
using testing::SweepDir;

// Passes (attainment 1) up to rate scale `capacity`, then drops to 0.5. Each run writes
// "rate=<scale>" to its output, so the test sees which run a file holds.
struct FakeFleet {
  explicit FakeFleet(double capacity_scale) : capacity(capacity_scale) {}
  double capacity;
  std::vector<double> rates;

  PointJobRunner Runner() {
    return [this](const PointJob& job, MPI_Comm) {
      EXPECT_TRUE(fs::exists(job.cluster)) << "the point's config is written before it runs";
      rates.push_back(job.rate_scale);
      std::FILE* out = std::fopen(job.output.c_str(), "w");
      std::fprintf(out, "rate=%.17g", job.rate_scale);
      std::fclose(out);
      output::SummaryRow row{};
      row.slo_attainment = job.rate_scale <= capacity ? 1.0 : 0.5;
      row.goodput_rps = 10 * job.rate_scale * row.slo_attainment;
      return row;
    };
  }
};

std::string RunText(double rate) {
  char text[64];
  std::snprintf(text, sizeof text, "rate=%.17g", rate);
  return text;
}

SweepSpec MaxRateSpec(const SweepDir& dir, const std::string& search) {
  return LoadSweepSpec(
      dir.Write("s.yaml",
                "base: cluster.yaml\nworkload: traffic.yaml\n"
                "objective: {kind: max_rate, attainment_target: 0.9, rate_scale: " +
                    search + "}\n"));
}

const SweepLog kQuiet = [](const std::string&) {};

TEST(SweepRunner, MaxRateBisectsGeometricallyToTheBoundary) {
  SweepDir dir("runner-bisect");
  const SweepSpec spec = MaxRateSpec(dir, "{low: 0.25, high: 16, iterations: 6}");
  const SweepPoint point = ExpandPoints(spec).points.at(0);
  FakeFleet fleet(3.0);
  const PointOutcome outcome =
      RunPoint(spec, point, dir.dir() / "out", fleet.Runner(), MPI_COMM_SELF, kQuiet);
  // low passes, high fails; then sqrt(lo * hi) six times against a boundary at 3:
  // 2 pass, 5.657 fail, 3.364 fail, 2.594 pass, 2.954 pass, 3.152 fail.
  const std::vector<double> expected = {0.25, 16, 2, 5.6569, 3.3636, 2.5937, 2.9537, 3.1520};
  ASSERT_EQ(fleet.rates.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i)
    EXPECT_NEAR(fleet.rates[i], expected[i], 1e-4) << i;
  EXPECT_EQ(outcome.runs, 8);
  EXPECT_EQ(outcome.max_rate_scale, fleet.rates[6]);
  EXPECT_EQ(outcome.rate_scale, fleet.rates[6]);
  EXPECT_LE(outcome.max_rate_scale, 3.0);
  EXPECT_GT(fleet.rates[7], 3.0);  // the boundary is bracketed by the last pass and fail
  EXPECT_EQ(outcome.fleet.slo_attainment, 1.0);
  EXPECT_EQ(testing::ReadText(PointResultPath(dir.dir() / "out", 0)), RunText(fleet.rates[6]));
  EXPECT_TRUE(fs::exists(PointConfigPath(dir.dir() / "out", 0)));
  EXPECT_FALSE(fs::exists(dir.dir() / "out/points/point-0.probe.h5"));
}

TEST(SweepRunner, MaxRateEnds) {
  SweepDir dir("runner-ends");
  const SweepSpec spec = MaxRateSpec(dir, "{low: 0.5, high: 4, iterations: 3}");
  const SweepPoint point = ExpandPoints(spec).points.at(0);
  const fs::path out = dir.dir() / "out";

  FakeFleet too_slow(0.1);  // even low fails: value 0, the low run is kept
  PointOutcome o = RunPoint(spec, point, out, too_slow.Runner(), MPI_COMM_SELF, kQuiet);
  EXPECT_EQ(too_slow.rates, (std::vector<double>{0.5}));
  EXPECT_EQ(o.max_rate_scale, 0.0);
  EXPECT_EQ(o.rate_scale, 0.5);
  EXPECT_EQ(testing::ReadText(PointResultPath(out, 0)), RunText(0.5));

  FakeFleet fast(100);  // high passes: no bisection
  o = RunPoint(spec, point, out, fast.Runner(), MPI_COMM_SELF, kQuiet);
  EXPECT_EQ(fast.rates, (std::vector<double>{0.5, 4}));
  EXPECT_EQ(o.max_rate_scale, 4.0);
  EXPECT_EQ(testing::ReadText(PointResultPath(out, 0)), RunText(4));

  const SweepSpec none = MaxRateSpec(dir, "{low: 0.5, high: 4, iterations: 0}");
  FakeFleet middle(1);  // no iterations: the low run stands
  o = RunPoint(none, point, out, middle.Runner(), MPI_COMM_SELF, kQuiet);
  EXPECT_EQ(middle.rates, (std::vector<double>{0.5, 4}));
  EXPECT_EQ(o.max_rate_scale, 0.5);
  EXPECT_EQ(testing::ReadText(PointResultPath(out, 0)), RunText(0.5));
}

TEST(SweepRunner, OtherObjectivesRunOnceAtThePointsRate) {
  SweepDir dir("runner-once");
  const SweepSpec spec = LoadSweepSpec(dir.Write(
      "s.yaml", "base: cluster.yaml\nworkload: traffic.yaml\naxes: {rate_scale: [1.5, 7]}\n"));
  const SweepPoints sweep = ExpandPoints(spec);
  FakeFleet fleet(3.0);
  const PointOutcome o =
      RunPoint(spec, sweep.points.at(1), dir.dir() / "out", fleet.Runner(), MPI_COMM_SELF, kQuiet);
  EXPECT_EQ(fleet.rates, (std::vector<double>{7}));
  EXPECT_EQ(o.runs, 1);
  EXPECT_EQ(o.rate_scale, 7);
  EXPECT_EQ(testing::ReadText(PointResultPath(dir.dir() / "out", 1)), RunText(7));
}

// A failing point is an error, never skipped: its InputError comes out of the sweep.
TEST(SweepRunner, AFailingPointFailsTheSweep) {
  SweepDir dir("runner-fail");
  const SweepSpec spec = LoadSweepSpec(dir.Write(
      "s.yaml", "base: cluster.yaml\nworkload: traffic.yaml\naxes: {rate_scale: [1, 2, 3]}\n"));
  std::vector<double> ran;
  const PointJobRunner failing = [&ran](const PointJob& job, MPI_Comm) {
    ran.push_back(job.rate_scale);
    if (job.rate_scale == 2) throw InputError(job.cluster, 4, "tp", "boom");
    return output::SummaryRow{};
  };
  try {
    RunSweepPoints(spec, ExpandPoints(spec).points, dir.dir() / "out", failing, MPI_COMM_WORLD,
                   kQuiet);
    ADD_FAILURE() << "expected the failing point's error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("point-1.yaml:4: tp: boom"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(ran, (std::vector<double>{1, 2}));  // this rank stops at its first failure
}

}  // namespace
}  // namespace fleetsim
