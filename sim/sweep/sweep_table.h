// The aggregate of a sweep: one row per point -- its layout, the fleet's results, the
// objective and the point's rank -- built from the points' files alone, and written as
// <output-dir>/sweep.csv and <output-dir>/sweep.h5 (table /sweep; fixed-length strings,
// which Debian's parallel HDF5 1.10 requires).
//
//   std::vector<SweepRow> rows = CollectSweep(spec, points, "out/study");  // ranked
//   WriteSweepCsv("out/study/sweep.csv", rows);
//   WriteSweepHdf5("out/study/sweep.h5", rows, spec);
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

#include "core/request_name.h"
#include "output/table_schema.h"
#include "sweep/point_result.h"
#include "sweep/sweep_points.h"
#include "sweep/sweep_spec.h"

namespace fleetsim {

struct SweepRow {
  int64_t point;
  int64_t gpus;  // every instance's GPUs, all groups
  int64_t requests;
  int64_t finished;
  int64_t rank;  // 1 = best objective
  int32_t tp;    // the swept group's
  int32_t dp;    // its data-parallel ranks per instance
  int32_t replicas;
  int32_t prefix_caching;  // 1 or 0, as the engine resolved it
  int32_t max_num_batched_tokens;
  int32_t max_num_seqs;
  int32_t capacity_weighted;  // 1 or 0
  int32_t block_size;         // as the engine resolved it
  char hardware[kMaxLabelBytes];
  char attention_backend[24];
  char decode_kernel[40];
  char policy[24];
  double rate_scale;  // of the point's run (max_rate: of the kept run)
  double throughput_rps;
  double goodput_rps;
  double slo_attainment;
  double ttft_p99_s;
  double tpot_p99_s;
  double goodput_per_gpu;
  double cost_per_hour_usd;   // every instance's GPUs at the catalog's price per GPU-hour
  double goodput_per_dollar;  // requests within both SLOs per dollar: goodput x 3600 / cost
  double max_rate_scale;      // max_rate only (0: even the lowest rate failed), else NaN
  double objective;           // the spec's objective for this point
};

// Columns in the order of docs/SWEEPS.md.
output::TableSchema SweepSchema();

// The row of point `point` (rank still 0).
SweepRow SweepRowOf(int point, const PointResult& result, const SweepSpec& spec);

// Ranks by objective, highest first (NaN last, ties to the lower point); rows stay in
// point order.
void RankRows(std::vector<SweepRow>& rows);

// Reads every point's files under `output_dir` and ranks the rows. A missing file, or a
// point config that is not what the spec gives now (an edited spec), is an InputError
// naming them.
std::vector<SweepRow> CollectSweep(const SweepSpec& spec, const std::vector<SweepPoint>& points,
                                   const std::filesystem::path& output_dir);

void WriteSweepCsv(const std::filesystem::path& path, const std::vector<SweepRow>& rows);
// Serial (MPI_COMM_SELF); call on one rank.
void WriteSweepHdf5(const std::filesystem::path& path, const std::vector<SweepRow>& rows,
                    const SweepSpec& spec);

}  // namespace fleetsim
