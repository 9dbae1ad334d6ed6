// Quantized weights: how a checkpoint's (or a group's) linear layers are stored, what they
// weigh, and which layouts vLLM would refuse to load.
//
// Read from a Hugging Face config.json's `quantization_config` (quant_method awq, gptq,
// fp8, compressed-tensors) or set per instance group (the engine setting `quantization`,
// as vLLM's --quantization). Only the text decoder's linear projections are quantized:
// embeddings and lm_head stay in the model dtype (vLLM's AWQ/GPTQ/FP8 linear methods skip
// them), and so does every module the config excludes (`modules_to_not_convert`,
// `ignored_layers`, `ignore`, GPTQModel's `dynamic` "-:" entries).
//
//   Quantization q = *card.quantization;              // awq, 4 bits, group 128
//   q.Quantizes("model.layers.0.linear_attn.in_proj_ba");   // false: listed as not converted
//   q.BytesPerWeight();                               // 0.5 + 2.5 / 128 (scale and zero)
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/yaml_section.h"

namespace fleetsim {

enum class QuantMethod { kNone, kFp8, kInt8, kAwq, kGptq };

std::string_view NameOf(QuantMethod method);
// vLLM's spellings: fp8, int8, awq (awq_marlin), gptq (gptq_marlin), compressed-tensors is
// read from the config only.
std::optional<QuantMethod> ParseQuantMethod(std::string_view name);

struct Quantization {
  QuantMethod method = QuantMethod::kNone;
  int weight_bits = 16;
  // Input rows sharing one scale (and zero point): AWQ/GPTQ's group_size; 0 means one
  // scale per output column (FP8, INT8 W8A8).
  int group_size = 0;
  bool zero_point = false;  // AWQ's asymmetric 4-bit zero points (packed 8 per int32)
  // W8A8: activations are quantized too, so the GEMM runs at the 8-bit tensor rate where
  // the GPU has one. Weight-only formats (W4A16) dequantize to 16 bits in the kernel.
  bool activations = false;
  // Module name patterns left in the model dtype: substrings (vLLM's is_layer_skipped),
  // or regular expressions when written "re:..." (compressed-tensors, FP8 ignored_layers).
  std::vector<std::string> not_converted;
  // Where it came from: "config.json" or "engine setting"; for config.json, the file and
  // the line of its quantization_config (refusals point there).
  std::string origin;
  std::string file;
  int line = 0;

  // A quant_method fleetsim does not model (e.g. gpt-oss's mxfp4): the card loads, and an
  // engine is refused naming it.
  std::string unmodelled_method;

  bool IsQuantized() const { return method != QuantMethod::kNone; }
  // Whether the linear layer with this checkpoint name ("model.layers.3.mlp.down_proj") is
  // stored quantized.
  bool Quantizes(std::string_view module) const;
  // Storage per weight element, scales and zero points included.
  double BytesPerWeight() const;
  // "awq, 4-bit weights, group 128 (zero points), W4A16" and the like.
  std::string Describe() const;
};

// The config's `quantization_config`, or nullopt when it has none. An unknown method, or
// bits or group sizes vLLM has no kernel for, is an InputError naming the field.
std::optional<Quantization> ReadQuantizationConfig(const YamlSection& root);

// A quantization set per group (engine setting `quantization`), as if the checkpoint had
// been quantized so: the method's usual layout, with `group_size` for AWQ/GPTQ.
Quantization QuantizationForMethod(QuantMethod method, int group_size);

}  // namespace fleetsim
