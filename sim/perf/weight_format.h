// How a GEMM's weights are stored and multiplied, for the analytic GEMM model: the bytes it
// streams per weight, the tensor rate it multiplies at, and the dequantization it does on
// the vector units when the GPU cannot multiply the stored format natively.
//
//   W8A8 FP8 on an H100: 1 B per weight at the FP8 tensor peak, no dequantization.
//   W8A8 FP8 on an RDNA3 card (no FP8): 1 B per weight, dequantized to 16 bits (weight-only).
//   W4A16 AWQ on an RX 7900 XT: 0.52 B per weight, 16-bit WMMA, 5 vector ops per weight per
//   32-row tile of the output (vLLM's Triton AWQ kernel).
#pragma once

#include <string>

#include "model/hardware.h"
#include "model/quantization.h"

namespace fleetsim {

struct WeightFormat {
  double bytes_per_weight = 2;
  double peak_flops = 0;              // the tensor rate the multiply runs at
  double dequant_ops_per_weight = 0;  // vector ops to turn one weight into the MMA's type
  double dequant_tile_rows = 1;       // output rows sharing one dequantization of a weight
  double vector_flops = 0;            // the GPU's non-tensor (fp32) rate
  std::string kernel;                 // what runs it, for the docs and inspect
};

// The format a quantized linear layer runs in on this GPU; `dtype` is the activations'.
WeightFormat WeightFormatFor(const Quantization& quant, const HardwareSpec& hardware, Dtype dtype);

}  // namespace fleetsim
