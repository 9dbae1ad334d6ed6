// Quantized GEMMs (perf/weight_format.h, KernelRoofline::GemmUs): the bytes a format
// streams, the tensor rate it multiplies at, and the dequantization a GPU without the
// format pays. Expected values from the catalog's figures and the sources the code cites.
#include "perf/weight_format.h"

#include <cmath>

#include <gtest/gtest.h>

#include "core/project_paths.h"
#include "model/model_catalog.h"
#include "perf/analytic_kernels.h"

namespace fleetsim {
namespace {

HardwareSpec Gpu(const std::string& name) {
  return LoadHardware(HardwareCatalogDir(), name);
}

TEST(WeightFormat, FourBitAwqOnRdna3IsATritonKernelThatDequantizesPerTile) {
  const WeightFormat f = WeightFormatFor(QuantizationForMethod(QuantMethod::kAwq, 128),
                                         Gpu("RX-7900-XT"), Dtype::kBfloat16);
  EXPECT_DOUBLE_EQ(f.bytes_per_weight, 0.5 + 2.5 / 128);
  EXPECT_DOUBLE_EQ(f.peak_flops, 103e12);  // 16-bit WMMA
  EXPECT_DOUBLE_EQ(f.dequant_ops_per_weight, 5);
  EXPECT_DOUBLE_EQ(f.dequant_tile_rows, 32);
  EXPECT_DOUBLE_EQ(f.vector_flops, 51.6e12);
  // On CUDA, Marlin.
  const WeightFormat marlin = WeightFormatFor(QuantizationForMethod(QuantMethod::kAwq, 128),
                                              Gpu("H100-SXM"), Dtype::kBfloat16);
  EXPECT_NE(marlin.kernel.find("Marlin"), std::string::npos);
}

TEST(WeightFormat, Fp8RunsAtTheFp8RateOnlyWhereTheGpuHasOne) {
  const Quantization fp8 = QuantizationForMethod(QuantMethod::kFp8, 0);
  const WeightFormat h100 = WeightFormatFor(fp8, Gpu("H100-SXM"), Dtype::kBfloat16);
  EXPECT_DOUBLE_EQ(h100.peak_flops, 1978.9e12);
  EXPECT_DOUBLE_EQ(h100.dequant_ops_per_weight, 0);
  EXPECT_DOUBLE_EQ(h100.bytes_per_weight, 1);
  // RDNA3 has no FP8: weight-only, dequantized to 16 bits.
  const WeightFormat rdna = WeightFormatFor(fp8, Gpu("RX-7900-XT"), Dtype::kBfloat16);
  EXPECT_DOUBLE_EQ(rdna.peak_flops, 103e12);
  EXPECT_DOUBLE_EQ(rdna.dequant_ops_per_weight, 2);
  EXPECT_DOUBLE_EQ(rdna.bytes_per_weight, 1);
}

TEST(WeightFormat, ADecodeGemmStreamsTheFourBitBytes) {
  // gate_up_proj of the 27B at TP 2 (n = 17,408, k = 5,120), one token: memory-bound on the
  // 4-bit weights (46.3 MB) at 800 GB/s x 0.7966 -- 73 us -- against 178 MB in bf16; its
  // compute, 16 padded rows at 0.79 of 103 TFLOPS plus 5 ops per weight at 51.6 TFLOPS,
  // is 35 + 8.6 us.
  const HardwareSpec gpu = Gpu("RX-7900-XT");
  const KernelRoofline r(gpu, Dtype::kBfloat16);
  const WeightFormat awq =
      WeightFormatFor(QuantizationForMethod(QuantMethod::kAwq, 128), gpu, Dtype::kBfloat16);
  const AnalyticConstants c;
  const double n = 17408, k = 5120;
  const double memory = ((k + n) * 2 + n * k * (0.5 + 2.5 / 128)) / (800e9 * c.memory_efficiency);
  EXPECT_NEAR(r.GemmUs(1, n, k, &awq), (memory + c.launch_s) * 1e6, 1e-6);
  EXPECT_GT(r.GemmUs(1, n, k) / r.GemmUs(1, n, k, &awq), 3);
  // A 2,048-token prefill is compute-bound: the multiply at the large-GEMM fraction of peak,
  // plus the dequantization redone for each of its 64 row tiles of 32.
  const double compute = 2 * 2048 * n * k / (103e12 * c.gemm_efficiency) + n * k * 5 * 64 / 51.6e12;
  EXPECT_NEAR(r.GemmUs(2048, n, k, &awq), (compute + c.launch_s) * 1e6, 1e-6);
}

TEST(WeightFormat, TheMtpFcOfTheAwq27BIsABf16GemmOf2HiddenByHiddenOverTp) {
  // qwen3_5_mtp.py: fc = ColumnParallelLinear(2 x 5,120, 5,120): at TP 2 each rank computes
  // n = 2,560 outputs from k = 10,240 inputs. The AWQ config lists "mtp" in
  // modules_to_not_convert, so its weights stay bf16 (vLLM's is_layer_skipped matches the
  // prefix "mtp.fc"): one token streams (10,240 + 2,560 x 10,240 + 2,560) x 2 B =
  // 52,454,400 B at 800 GB/s x 0.7966. Its compute, 2 x 2,560 x 10,240 flops at
  // 103 TFLOPS x 0.79 x 1 / (1 + 70.3), is 46 us: below the 82 us of streaming.
  const ModelCard card = ModelCatalog(ModelsDir()).Load("qwen3.8-27b-awq");
  const HardwareSpec gpu = Gpu("RX-7900-XT");
  const AnalyticKernels k(card, gpu, 2);
  ASSERT_TRUE(k.GemmDimsOf(Kernel::kMtpFc));
  EXPECT_DOUBLE_EQ(k.GemmDimsOf(Kernel::kMtpFc)->n, 2560);
  EXPECT_DOUBLE_EQ(k.GemmDimsOf(Kernel::kMtpFc)->k, 10240);
  EXPECT_EQ(k.FormatOf(Kernel::kMtpFc), nullptr);       // bf16: not converted
  EXPECT_NE(k.FormatOf(Kernel::kGateUpProj), nullptr);  // the target's MLP is 4-bit
  const AnalyticConstants c;
  const double memory = 52'454'400 / (800e9 * c.memory_efficiency);
  EXPECT_NEAR(*k.DenseUs(Kernel::kMtpFc, 1), (memory + c.launch_s) * 1e6, 1e-6);
  // A model without MTP layers has no such kernel.
  const ModelCard llama_card = ModelCatalog(ModelsDir()).Load("llama-3.1-8b");
  const AnalyticKernels llama(llama_card, gpu, 1);
  EXPECT_FALSE(llama.GemmDimsOf(Kernel::kMtpFc));
  EXPECT_FALSE(llama.DenseUs(Kernel::kMtpFc, 1));
}

}  // namespace
}  // namespace fleetsim
