// The analytic model as compared with measured kernels: a measured row's shape mapped onto
// KernelRoofline's arguments, in one place. The two attention terms below were found here
// on the measured tables and now live in AnalyticConstants and KernelRoofline.
//
// Measured FlashAttention-3 calls (aiconfigurator, H100 and H200) cost about 9 us before
// any work, three times a GEMM's launch. They then cost about 2.7 us per work tile on one
// SM. A tile is one sequence's KV head over up to 128 query rows, with the query heads of
// a KV group packed together. Without these terms, the constants shared with the GEMMs
// leave attention at 45-52 % MAPE after calibration. Even fitted to attention alone (a
// 10 us launch_s, which takes the GEMMs to 77 %), prefill stays at 23-25 %. With them:
//
//   time = roofline(attention_launch_s in place of launch_s)
//        + tiles / compute_units x attention_tile_s
//   tiles = batch x kv_heads x ceil(query_tokens x q_heads / kv_heads / 128)
//
//
//   KernelPredictor p(h200, Dtype::kBfloat16, /*split_kv=*/true, fitted);
//   double us = p.Us(measured_row);
#pragma once

#include "model/dtype.h"
#include "model/hardware.h"
#include "perf/analytic_kernels.h"
#include "perf/kernel_db/measured_kernels.h"

namespace fleetsim {

class KernelPredictor {
 public:
  KernelPredictor(const HardwareSpec& hardware, Dtype dtype, const AnalyticConstants& constants);
  explicit KernelPredictor(const KernelRoofline& roofline);

  // Predicted microseconds of the measured row's shape.
  double Us(const MeasuredKernel& kernel) const;

 private:
  KernelRoofline roofline_;
};

}  // namespace fleetsim
