// Fits the analytic model's constants to measured kernel tables of several GPUs at once:
// one set of constants for all of them, since the model is per GPU through the hardware
// catalog's figures (peak FLOP/s, bandwidth, SMs), not through its constants.
//
// Each kernel class fits its own constants (at most four), minimizing its MAPE averaged
// over the GPUs (each GPU weighs the same, whatever its row count), by a deterministic
// coordinate search (coordinate_search.h):
//   GEMM              gemm_efficiency, gemm_half_m, memory_efficiency, launch_s
//   attention         attention_efficiency, kv_split_tokens, and the proposed
//   (prefill+decode)  attention_launch_s, attention_tile_s (analytic_kernels.h), fitted
//                     on prefill and decode together since both share them; decode's
//                     memory_efficiency is GEMM's
//   MoE               nothing of its own: it reuses the GEMM constants
//   GDN (4 sub-       gdn_conv_efficiency, gdn_chunk_efficiency, gdn_update_launch_s,
//   kernels)          gdn_launch_s, on the GPUs with a GDN table (H200 only); the
//                     fp32 state streams at GEMM's memory_efficiency
//
//   std::vector<CalibrationGpu> gpus = {{h100_spec, h100_tables}, {h200_spec, h200_tables}};
//   CalibrationResult r = Calibrate(gpus);
//   r.fitted.gemm_efficiency;
//   JsonWriter json(std::cout); WriteJson(json, r);
#pragma once

#include <string>
#include <vector>

#include "core/json_writer.h"
#include "model/hardware.h"
#include "perf/kernel_db/coordinate_search.h"
#include "perf/kernel_db/kernel_error.h"
#include "perf/kernel_db/kernel_predictor.h"
#include "perf/kernel_db/measured_kernels.h"

namespace fleetsim {

struct CalibrationGpu {
  HardwareSpec hardware;
  MeasuredTables tables;  // bf16 tables (the aiconfigurator files are bf16 excerpts)
};

struct CalibrationOptions {
  // 6 passes of 17 points: ~1200 evaluations (GEMM, attention, GDN), about a second for
  // H100 + H200 on two cores.
  CoordinateSearchOptions search = {.rounds = 6, .grid_points = 17};
  // Fit on every row_stride-th row of each class and GPU (1 = all). Before/after errors
  // are always over all rows.
  int row_stride = 1;
  // Fit the proposed attention terms; false fits only what AnalyticConstants has today.
  bool proposed_attention_terms = true;
};

struct ClassCalibration {
  std::string system;
  KernelClass cls = KernelClass::kGemm;
  ErrorSummary before;
  ErrorSummary after;
};

struct CalibrationResult {
  AnalyticConstants start;
  AnalyticConstants fitted;
  std::vector<ClassCalibration> classes;  // by GPU, then by class
  int evaluations = 0;                    // objective evaluations of the search

  // The entry of (system, cls); one with 0 rows when absent.
  ClassCalibration Of(const std::string& system, KernelClass cls) const;
};

CalibrationResult Calibrate(const std::vector<CalibrationGpu>& gpus,
                            const AnalyticConstants& start = AnalyticConstants::Uncalibrated(),
                            const CalibrationOptions& options = {});

void WriteJson(JsonWriter& json, const AnalyticConstants& constants);
void WriteJson(JsonWriter& json, const CalibrationResult& result);

}  // namespace fleetsim
