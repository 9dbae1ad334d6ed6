#include "sweep/sweep_runner.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <utility>

#include "comm/collectives.h"
#include "comm/error_agreement.h"
#include "core/format.h"
#include "core/input_error.h"
#include "sweep/point_config.h"

namespace fleetsim {
namespace {

namespace fs = std::filesystem;

// "goodput 57.01 req/s, SLO attainment 99.5 %"
std::string Outcome(const output::SummaryRow& fleet) {
  return Printf("goodput %.4g req/s, SLO attainment %.1f %%", fleet.goodput_rps,
                100.0 * fleet.slo_attainment);
}

// Bisects the rate scale (geometrically, the range spans orders of magnitude): `low`
// first -- failing there ends the search with 0 and keeps that run -- then `high`, then
// `iterations` midpoints. The kept file is always the run at the highest passing scale.
void SearchMaxRate(const SweepSpec& spec, const SweepPoint& point, const fs::path& config,
                   const fs::path& result, const PointJobRunner& run, MPI_Comm comm,
                   const SweepLog& log, PointOutcome& outcome) {
  const RateSearch& search = spec.rate_search;
  const fs::path probe =
      result.parent_path() / ("point-" + std::to_string(point.index) + ".probe.h5");
  auto attempt = [&](double rate) {
    const output::SummaryRow fleet = run({config.string(), probe.string(), rate}, comm);
    ++outcome.runs;
    const bool pass = fleet.slo_attainment >= search.attainment_target;
    log("point " + std::to_string(point.index) + ": rate_scale " + Significant(rate, 6) + ": " +
        Outcome(fleet) + (pass ? " -> pass" : " -> fail"));
    return std::make_pair(fleet, pass);
  };
  auto keep = [&](const output::SummaryRow& fleet, double rate) {
    comm::OnRankZero(comm, [&] { fs::rename(probe, result); });
    outcome.fleet = fleet;
    outcome.rate_scale = rate;
  };
  auto drop = [&] { comm::OnRankZero(comm, [&] { fs::remove(probe); }); };

  const auto [low_fleet, low_pass] = attempt(search.low);
  keep(low_fleet, search.low);
  if (!low_pass) return;
  outcome.max_rate_scale = search.low;
  const auto [high_fleet, high_pass] = attempt(search.high);
  if (high_pass) {
    keep(high_fleet, search.high);
    outcome.max_rate_scale = search.high;
    return;
  }
  drop();
  double lo = search.low, hi = search.high;
  for (int i = 0; i < search.iterations; ++i) {
    const double mid = std::sqrt(lo * hi);
    const auto [fleet, pass] = attempt(mid);
    if (pass) {
      keep(fleet, mid);
      outcome.max_rate_scale = lo = mid;
    } else {
      drop();
      hi = mid;
    }
  }
}

}  // namespace

PointOutcome RunPoint(const SweepSpec& spec, const SweepPoint& point, const fs::path& output_dir,
                      const PointJobRunner& run, MPI_Comm comm, const SweepLog& log) {
  const auto start = std::chrono::steady_clock::now();
  const fs::path config = PointConfigPath(output_dir, point.index);
  const fs::path result = PointResultPath(output_dir, point.index);
  comm::OnRankZero(comm, [&] {
    std::error_code error;
    fs::create_directories(PointsDir(output_dir), error);
    if (error) {
      throw OptionError("--output-dir",
                        "cannot create " + PointsDir(output_dir).string() + ": " + error.message());
    }
    fs::remove(result);  // a stale result never stands for this run
    WritePointConfig(spec, point, config);
  });
  PointOutcome outcome;
  try {
    if (spec.objective == SweepObjective::kMaxRate) {
      SearchMaxRate(spec, point, config, result, run, comm, log, outcome);
    } else {
      outcome.rate_scale = point.RateScale();
      outcome.fleet = run({config.string(), result.string(), outcome.rate_scale}, comm);
      outcome.runs = 1;
    }
  } catch (const InputError& e) {
    // The error may name a file the point shares with others (a bundle): say which point.
    throw InputError("", 0, "",
                     "point " + std::to_string(point.index) + " (" + DescribePoint(point) + ", " +
                         config.string() + "): " + e.what());
  }
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::string line = "point " + std::to_string(point.index) + " (" + DescribePoint(point) +
                     "): " + Outcome(outcome.fleet);
  if (spec.objective == SweepObjective::kMaxRate)
    line += ", max rate_scale " + Significant(outcome.max_rate_scale, 6);
  log(line + ", " + std::to_string(outcome.runs) + " run(s), " + Significant(wall_s, 3) + " s");
  return outcome;
}

void RunSweepPoints(const SweepSpec& spec, const std::vector<SweepPoint>& points,
                    const fs::path& output_dir, const PointJobRunner& run, MPI_Comm comm,
                    const SweepLog& log) {
  const int rank = comm::RankOf(comm);
  const int size = comm::SizeOf(comm);
  // The lowest failing point speaks: a rank stops at its first failing point.
  comm::RankFailure failure;
  for (const SweepPoint& point : points) {
    if (point.index % size != rank) continue;
    failure.Guard([&] { RunPoint(spec, point, output_dir, run, MPI_COMM_SELF, log); }, point.index);
    if (failure.failed()) break;
  }
  comm::AgreeOnFailure(failure, comm);
}

}  // namespace fleetsim
