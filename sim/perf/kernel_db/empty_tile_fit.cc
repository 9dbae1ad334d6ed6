#include "perf/kernel_db/empty_tile_fit.h"

#include <cmath>
#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include "core/csv_reader.h"
#include "core/input_error.h"

namespace fleetsim {
namespace {

// (prefill_chunk, kv_prefill, n_decode, kv_decode)
using Cell = std::tuple<int64_t, int64_t, int64_t, int64_t>;

std::map<Cell, double> ReadCells(const std::string& path) {
  CsvReader csv(path);
  csv.RequireColumns({"prefill_chunk", "kv_prefill", "n_decode", "kv_decode", "time_us"});
  std::map<Cell, double> cells;
  while (csv.Next()) {
    const double us = csv.Number("time_us");
    if (!std::isfinite(us) || us <= 0) csv.Fail("time_us", "must be a positive number");
    cells[{csv.Int("prefill_chunk"), csv.Int("kv_prefill"), csv.Int("n_decode"),
           csv.Int("kv_decode")}] = us;
  }
  return cells;
}

struct Point {
  double x = 0;  // empty tiles per SM
  double y = 0;  // the decodes' extra cost beside the longer chunk, us
};

}  // namespace

EmptyTileFit FitEmptyTileSeconds(const std::string& attention_csv, const EmptyTileGeometry& g) {
  const std::map<Cell, double> t = ReadCells(attention_csv);
  const auto rows = static_cast<int64_t>(g.query_tile_rows);
  auto at = [&t](int64_t c, int64_t kp, int64_t n, int64_t kd) -> const double* {
    const auto it = t.find({c, kp, n, kd});
    return it == t.end() ? nullptr : &it->second;
  };

  std::vector<Point> points;
  for (const auto& [cell, us] : t) {
    const auto [c, kp, n, kd] = cell;
    if (c <= rows || n <= 0 || static_cast<double>(kd) > g.key_block) continue;
    const double* chunk_alone = at(c, kp, 0, 0);
    const double* one_block = at(rows, kp, n, kd);
    const double* one_block_alone = at(rows, kp, 0, 0);
    if (!chunk_alone || !one_block || !one_block_alone) continue;
    const double blocks = std::ceil(static_cast<double>(c) / g.query_tile_rows);
    points.push_back({(blocks - 1) * static_cast<double>(n) * g.q_heads / g.compute_units,
                      (us - *chunk_alone) - (*one_block - *one_block_alone)});
  }
  if (points.empty()) {
    throw InputError(attention_csv, 0, "prefill_chunk",
                     "no mixed cell to difference: the fit needs chunks longer than " +
                         std::to_string(rows) + " tokens and of exactly " + std::to_string(rows) +
                         ", alone and beside decodes of at most " +
                         std::to_string(static_cast<int64_t>(g.key_block)) + " keys");
  }

  double sxy = 0, sxx = 0, sy = 0;
  for (const Point& p : points) {
    sxy += p.x * p.y;
    sxx += p.x * p.x;
    sy += p.y;
  }
  const double us_per_tile = sxy / sxx;
  double squared = 0;
  for (const Point& p : points)
    squared += (p.y - us_per_tile * p.x) * (p.y - us_per_tile * p.x);
  const auto n = static_cast<double>(points.size());
  return {.seconds = us_per_tile * 1e-6,
          .cells = static_cast<int>(points.size()),
          .mean_excess_us = sy / n,
          .rms_residual_us = std::sqrt(squared / n)};
}

}  // namespace fleetsim
