#include "sweep/sweep_table.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <fstream>
#include <limits>
#include <numeric>

#include <mpi.h>

#include "core/input_error.h"
#include "core/text_file.h"
#include "output/hdf5_file.h"
#include "output/run_tables.h"
#include "output/table_reader.h"
#include "sweep/point_config.h"

namespace fleetsim {
namespace {

namespace fs = std::filesystem;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Names a point's file relative to the output folder: "points/point-3.h5".
std::string Relative(const fs::path& file, const fs::path& output_dir) {
  return file.lexically_relative(output_dir).string();
}

output::TableRows AsTableRows(const std::vector<SweepRow>& rows) {
  output::TableRows table;
  table.count = static_cast<int64_t>(rows.size());
  table.bytes.resize(rows.size() * sizeof(SweepRow));
  if (!rows.empty()) std::memcpy(table.bytes.data(), rows.data(), table.bytes.size());
  return table;
}

}  // namespace

#define FLEETSIM_COLUMN(schema, Type, field, unit) \
  schema.Type(#field, offsetof(SweepRow, field), unit)

output::TableSchema SweepSchema() {
  output::TableSchema s(sizeof(SweepRow));
  FLEETSIM_COLUMN(s, Int64, point, "index");
  FLEETSIM_COLUMN(s, Int32, tp, "GPUs");
  FLEETSIM_COLUMN(s, Int32, dp, "ranks");
  FLEETSIM_COLUMN(s, Int32, replicas, "instances");
  FLEETSIM_COLUMN(s, Int64, gpus, "GPUs");
  s.String("hardware", offsetof(SweepRow, hardware), sizeof(SweepRow::hardware));
  FLEETSIM_COLUMN(s, Int32, prefix_caching, "flag");
  FLEETSIM_COLUMN(s, Int32, max_num_batched_tokens, "tokens");
  FLEETSIM_COLUMN(s, Int32, max_num_seqs, "requests");
  FLEETSIM_COLUMN(s, Int32, block_size, "tokens");
  s.String("attention_backend", offsetof(SweepRow, attention_backend),
           sizeof(SweepRow::attention_backend));
  s.String("decode_kernel", offsetof(SweepRow, decode_kernel), sizeof(SweepRow::decode_kernel));
  s.String("policy", offsetof(SweepRow, policy), sizeof(SweepRow::policy));
  FLEETSIM_COLUMN(s, Int32, capacity_weighted, "flag");
  FLEETSIM_COLUMN(s, Float64, rate_scale, "factor");
  FLEETSIM_COLUMN(s, Int64, requests, "requests");
  FLEETSIM_COLUMN(s, Int64, finished, "requests");
  FLEETSIM_COLUMN(s, Float64, throughput_rps, "requests/s");
  FLEETSIM_COLUMN(s, Float64, goodput_rps, "requests/s");
  FLEETSIM_COLUMN(s, Float64, slo_attainment, "fraction");
  FLEETSIM_COLUMN(s, Float64, ttft_p99_s, "s");
  FLEETSIM_COLUMN(s, Float64, tpot_p99_s, "s");
  FLEETSIM_COLUMN(s, Float64, goodput_per_gpu, "requests/s/GPU");
  FLEETSIM_COLUMN(s, Float64, cost_per_hour_usd, "USD/h");
  FLEETSIM_COLUMN(s, Float64, goodput_per_dollar, "requests/USD");
  FLEETSIM_COLUMN(s, Float64, max_rate_scale, "factor");
  FLEETSIM_COLUMN(s, Float64, objective, "objective");
  FLEETSIM_COLUMN(s, Int64, rank, "rank");
  return s;
}

#undef FLEETSIM_COLUMN

SweepRow SweepRowOf(int point, const PointResult& r, const SweepSpec& spec) {
  SweepRow row{};
  row.point = point;
  row.tp = r.tp;
  row.dp = r.dp;
  row.replicas = r.replicas;
  row.gpus = r.gpus;
  output::CopyName(row.hardware, r.hardware);
  row.prefix_caching = r.prefix_caching ? 1 : 0;
  row.max_num_batched_tokens = r.max_num_batched_tokens;
  row.max_num_seqs = r.max_num_seqs;
  row.block_size = r.block_size;
  output::CopyName(row.attention_backend, r.attention_backend);
  output::CopyName(row.decode_kernel, r.decode_kernel);
  output::CopyName(row.policy, r.policy);
  row.capacity_weighted = r.capacity_weighted ? 1 : 0;
  row.rate_scale = r.rate_scale;
  row.requests = r.fleet.requests;
  row.finished = r.fleet.finished;
  row.throughput_rps = r.fleet.throughput_rps;
  row.goodput_rps = r.fleet.goodput_rps;
  row.slo_attainment = r.fleet.slo_attainment;
  row.ttft_p99_s = r.fleet.ttft_p99_s;
  row.tpot_p99_s = r.fleet.tpot_p99_s;
  row.goodput_per_gpu = r.gpus > 0 ? r.fleet.goodput_rps / static_cast<double>(r.gpus) : kNaN;
  row.cost_per_hour_usd = r.cost_per_hour_usd;
  row.goodput_per_dollar =
      r.cost_per_hour_usd > 0 ? r.fleet.goodput_rps * 3600.0 / r.cost_per_hour_usd : kNaN;
  row.max_rate_scale = kNaN;
  switch (spec.objective) {
    case SweepObjective::kGoodputPerGpu:
      row.objective = row.goodput_per_gpu;
      break;
    case SweepObjective::kGoodputPerDollar:
      row.objective = row.goodput_per_dollar;
      break;
    case SweepObjective::kMaxRate:
      // The kept run is the highest passing one, or the `low` run when even that failed.
      row.max_rate_scale =
          r.fleet.slo_attainment >= spec.rate_search.attainment_target ? r.rate_scale : 0.0;
      row.objective = row.max_rate_scale;
      break;
  }
  return row;
}

void RankRows(std::vector<SweepRow>& rows) {
  std::vector<std::size_t> order(rows.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&rows](std::size_t a, std::size_t b) {
    const double x = rows[a].objective, y = rows[b].objective;
    if (std::isnan(x) || std::isnan(y)) return !std::isnan(x) && std::isnan(y);
    return x > y;
  });
  for (std::size_t i = 0; i < order.size(); ++i)
    rows[order[i]].rank = static_cast<int64_t>(i + 1);
}

std::vector<SweepRow> CollectSweep(const SweepSpec& spec, const std::vector<SweepPoint>& points,
                                   const fs::path& output_dir) {
  std::vector<std::string> missing, stale;
  for (const SweepPoint& p : points) {
    const fs::path config = PointConfigPath(output_dir, p.index);
    const fs::path result = PointResultPath(output_dir, p.index);
    for (const fs::path& file : {config, result}) {
      if (!fs::is_regular_file(file)) missing.push_back(Relative(file, output_dir));
    }
    if (fs::is_regular_file(config) && ReadTextFile(config) != PointConfigYaml(spec, p))
      stale.push_back(Relative(config, output_dir));
  }
  auto list = [](const std::vector<std::string>& files) {
    std::string text;
    for (std::size_t i = 0; i < files.size() && i < 10; ++i)
      text += (i ? ", " : "") + files[i];
    if (files.size() > 10) text += " and " + std::to_string(files.size() - 10) + " more";
    return text;
  };
  if (!missing.empty()) {
    throw InputError(output_dir.string(), 0, "",
                     "missing point files: " + list(missing) +
                         " (run them with `fleetsim sweep SPEC --point K`)");
  }
  if (!stale.empty()) {
    throw InputError(output_dir.string(), 0, "",
                     "point configs differ from what " + spec.file + " gives now: " + list(stale) +
                         " (the spec or its base changed since the points ran; rerun them)");
  }
  std::vector<SweepRow> rows;
  for (const SweepPoint& p : points) {
    const PointResult result = ReadPointResult(PointConfigPath(output_dir, p.index),
                                               PointResultPath(output_dir, p.index), spec.group);
    rows.push_back(SweepRowOf(p.index, result, spec));
  }
  RankRows(rows);
  return rows;
}

void WriteSweepCsv(const fs::path& path, const std::vector<SweepRow>& rows) {
  const fs::path staging = path.string() + ".tmp";
  {
    std::ofstream out(staging);
    output::WriteCsv(out, SweepSchema(), AsTableRows(rows));
    if (!out) throw InputError(path.string(), 0, "", "cannot write the sweep table");
  }
  fs::rename(staging, path);
}

void WriteSweepHdf5(const fs::path& path, const std::vector<SweepRow>& rows,
                    const SweepSpec& spec) {
  output::Hdf5File file(path.string(), MPI_COMM_SELF);
  const auto count = static_cast<int64_t>(rows.size());
  file.WriteTable("/sweep", SweepSchema(), rows.data(), 0, count, count);
  file.WriteAttribute("/sweep", "sweep", spec.name);
  file.WriteAttribute("/sweep", "objective", std::string(SweepObjectiveName(spec.objective)));
  if (spec.objective == SweepObjective::kMaxRate)
    file.WriteAttribute("/sweep", "attainment_target", spec.rate_search.attainment_target);
  file.Commit();
}

}  // namespace fleetsim
