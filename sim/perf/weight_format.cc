#include "perf/weight_format.h"

namespace fleetsim {
namespace {

double PeakOr(const HardwareSpec& hardware, const char* dtype, double fallback) {
  const auto found = hardware.peak_flops.find(dtype);
  return found == hardware.peak_flops.end() ? fallback : found->second.value;
}

}  // namespace

WeightFormat WeightFormatFor(const Quantization& quant, const HardwareSpec& hardware, Dtype dtype) {
  WeightFormat f;
  f.peak_flops = hardware.Peak16BitFlops(dtype);
  f.bytes_per_weight = BytesOf(dtype);
  f.vector_flops = PeakOr(hardware, "fp32", f.peak_flops / 8);
  f.kernel = "16-bit GEMM";
  const bool cuda = hardware.attention.platform == "cuda";
  switch (quant.method) {
    case QuantMethod::kNone:
      return f;
    case QuantMethod::kFp8:
    case QuantMethod::kInt8: {
      f.bytes_per_weight = quant.BytesPerWeight();
      const char* native = quant.method == QuantMethod::kFp8 ? "fp8" : "int8";
      if (quant.activations && hardware.peak_flops.contains(native)) {
        // W8A8 on tensor cores that take the format (CUTLASS scaled_mm on CUDA, hipBLASLt
        // on ROCm): the 8-bit peak, activations quantized per token on the fly.
        f.peak_flops = hardware.peak_flops.at(native).value;
        f.kernel = std::string(native) + " W8A8 at the " + native + " tensor rate";
        return f;
      }
      // No 8-bit tensor format on this GPU (RDNA3 has no FP8; the catalog lists the rates
      // it has): weight-only, dequantized to 16 bits in the main loop -- convert and scale,
      // two vector ops per weight per 16-row tile (vLLM's FP8 Marlin for GPUs without
      // native FP8, which treats the weights like 8-bit Marlin tiles of thread_m_blocks x
      // 16 rows).
      f.dequant_ops_per_weight = 2;
      f.dequant_tile_rows = 16;
      f.kernel = std::string(native) + " weights dequantized to 16 bits (no " + native +
                 " tensor rate on this GPU)";
      return f;
    }
    case QuantMethod::kAwq:
    case QuantMethod::kGptq:
      f.bytes_per_weight = quant.BytesPerWeight();
      if (cuda) {
        // vLLM picks awq_marlin / gptq_marlin on SM >= 8.0. Marlin dequantizes 4-bit pairs
        // with a lop3 and a half2 fma (csrc/quantization/gptq_marlin/dequant.h): about 1.5
        // ops per weight, per 16-row m block.
        f.dequant_ops_per_weight = 1.5;
        f.dequant_tile_rows = 16;
        f.kernel = "W4A16 Marlin";
      } else {
        // ROCm: vLLM's Triton AWQ GEMM (awq_triton.py awq_gemm_kernel): per weight a shift,
        // a mask, the zero subtract, the scale multiply and the conversion, 5 vector ops,
        // redone by every BLOCK_SIZE_M = 32-row program.
        f.dequant_ops_per_weight = 5;
        f.dequant_tile_rows = 32;
        f.kernel = "W4A16 Triton (awq_gemm_kernel)";
      }
      return f;
  }
  return f;
}

}  // namespace fleetsim
