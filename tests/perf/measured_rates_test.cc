// Where the hardware catalog holds a measured rate for a card the fit did not see, the
// analytic model uses it instead of the fraction fitted on H100/H200: a streaming rate
// (memory_stream_efficiency) and a matmul rate (matmul_achievable_flops).
#include <gtest/gtest.h>

#include "core/project_paths.h"
#include "model/hardware.h"
#include "perf/analytic_kernels.h"

namespace fleetsim {
namespace {

// A card with a measured streaming rate (the GDDR ones) streams at it, not at the rate the
// fit found on HBM: the bandwidth term of a memory-bound pass scales by their ratio.
TEST(MeasuredRates, AStreamingEfficiencyReplacesTheFittedOne) {
  const HardwareSpec measured = LoadHardware(HardwareCatalogDir(), "RTX-4090");
  HardwareSpec fitted = measured;
  fitted.memory_stream_efficiency.reset();
  const KernelRoofline with(measured, Dtype::kBfloat16), without(fitted, Dtype::kBfloat16);
  EXPECT_DOUBLE_EQ(with.constants().memory_efficiency, 0.977);
  EXPECT_DOUBLE_EQ(without.constants().memory_efficiency,
                   AnalyticConstants{}.memory_efficiency);  // the calibrated value
  const double launch_us = with.constants().gdn_update_launch_s * 1e6;
  const double bytes = 64e6;
  EXPECT_NEAR((without.ElementwiseUs(bytes) - launch_us) / (with.ElementwiseUs(bytes) - launch_us),
              0.977 / AnalyticConstants{}.memory_efficiency, 1e-9);
}

// A measured matmul rate sets large GEMMs' ceiling: their compute term scales by the
// measured fraction of peak over the fitted one, and so do flash attention's and the
// chunked delta rule's fractions. A memory-bound GEMM costs what it did.
TEST(MeasuredRates, AMatmulRateReplacesTheFittedGemmEfficiency) {
  const HardwareSpec measured = LoadHardware(HardwareCatalogDir(), "RTX-4090");
  HardwareSpec fitted = measured;
  fitted.matmul_achievable_flops.reset();
  const KernelRoofline with(measured, Dtype::kBfloat16), without(fitted, Dtype::kBfloat16);
  const double peak = 165.2e12;  // the whitepaper's BF16 rate with FP32 accumulation
  EXPECT_DOUBLE_EQ(measured.Peak16BitFlops(Dtype::kBfloat16), peak);
  EXPECT_DOUBLE_EQ(with.constants().gemm_efficiency, 178.5e12 / peak);
  EXPECT_DOUBLE_EQ(without.constants().gemm_efficiency, AnalyticConstants{}.gemm_efficiency);

  const double launch_us = with.constants().launch_s * 1e6;
  const double big = 8192;  // compute-bound on any card
  EXPECT_NEAR(
      (without.GemmUs(big, big, big) - launch_us) / (with.GemmUs(big, big, big) - launch_us),
      (178.5e12 / peak) / AnalyticConstants{}.gemm_efficiency, 1e-9);
  EXPECT_DOUBLE_EQ(with.GemmUs(1, 28672, 4096), without.GemmUs(1, 28672, 4096));
  const double scale = (178.5e12 / peak) / AnalyticConstants{}.gemm_efficiency;
  EXPECT_NEAR(with.constants().attention_efficiency,
              AnalyticConstants{}.attention_efficiency * scale, 1e-12);
  EXPECT_NEAR(with.constants().gdn_chunk_efficiency,
              AnalyticConstants{}.gdn_chunk_efficiency * scale, 1e-12);
  // A long prefill is compute-bound: faster by nearly the same factor (fixed costs aside).
  const double ratio = without.AttentionPrefillUs(1, 2048, 8192, 32, 8, 128) /
                       with.AttentionPrefillUs(1, 2048, 8192, 32, 8, 128);
  EXPECT_GT(ratio, 1.2);
  EXPECT_LE(ratio, scale);
}

}  // namespace
}  // namespace fleetsim
