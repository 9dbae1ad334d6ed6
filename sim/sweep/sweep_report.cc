#include "sweep/sweep_report.h"

#include <algorithm>
#include <cmath>

#include "core/format.h"

namespace fleetsim {
namespace {

std::string Value(double v) {
  return std::isnan(v) ? "n/a" : Significant(v, 4);
}

}  // namespace

std::string PointList(const SweepPoints& sweep) {
  std::string text = "points: " + std::to_string(sweep.points.size()) + "\n";
  for (const SweepPoint& p : sweep.points)
    text += "point " + std::to_string(p.index) + ": " + DescribePoint(p) + "\n";
  for (const std::string& skipped : sweep.skipped)
    text += "skipped: " + skipped + "\n";
  return text;
}

std::string Ranking(const std::vector<SweepRow>& rows, const std::vector<SweepPoint>& points,
                    const SweepSpec& spec, std::size_t top) {
  std::vector<const SweepRow*> ranked;
  for (const SweepRow& row : rows)
    ranked.push_back(&row);
  std::sort(ranked.begin(), ranked.end(),
            [](const SweepRow* a, const SweepRow* b) { return a->rank < b->rank; });
  const std::string objective(SweepObjectiveName(spec.objective));
  auto layout = [&points](const SweepRow& row) {
    return DescribePoint(points[static_cast<std::size_t>(row.point)]);
  };

  std::string text =
      Printf("%4s %5s %18s %10s %7s %9s %9s %6s %9s  %s\n", "rank", "point", objective.c_str(),
             "goodput/s", "SLO", "TTFT p99", "TPOT p99", "GPUs", "$/hour", "layout");
  for (std::size_t i = 0; i < ranked.size() && i < top; ++i) {
    const SweepRow& r = *ranked[i];
    text += Printf("%4lld %5lld %18s %10.4g %6.1f%% %8.3fs %8.4fs %6lld %9.2f  %s\n",
                   static_cast<long long>(r.rank), static_cast<long long>(r.point),
                   Value(r.objective).c_str(), r.goodput_rps, 100.0 * r.slo_attainment,
                   r.ttft_p99_s, r.tpot_p99_s, static_cast<long long>(r.gpus), r.cost_per_hour_usd,
                   layout(r).c_str());
  }
  if (ranked.size() > top) text += Printf("(%zu more in sweep.csv)\n", ranked.size() - top);
  if (ranked.empty()) return text;

  const SweepRow& best = *ranked[0];
  text += Printf("best: point %lld (%s) %s %s", static_cast<long long>(best.point),
                 layout(best).c_str(), objective.c_str(), Value(best.objective).c_str());
  if (ranked.size() == 1) return text + " (the only point)\n";
  const SweepRow& next = *ranked[1];
  const long long next_point = static_cast<long long>(next.point);
  if (std::isnan(best.objective) || std::isnan(next.objective)) {
    text += Printf(", next point %lld %s\n", next_point, Value(next.objective).c_str());
  } else if (next.objective > 0) {
    text += Printf(", ahead of the next (point %lld) by %.1f %%\n", next_point,
                   100.0 * (best.objective / next.objective - 1.0));
  } else {
    text += Printf(", ahead of the next (point %lld), which scores %s\n", next_point,
                   Value(next.objective).c_str());
  }
  return text;
}

}  // namespace fleetsim
