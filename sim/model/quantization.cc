#include "model/quantization.h"

#include <algorithm>
#include <regex>

namespace fleetsim {
namespace {

// vLLM's 4-bit kernels take these group sizes (AWQ_TRITON_SUPPORTED_GROUP_SIZES and
// Marlin's [-1, 32, 64, 128]); -1 (one group spanning all inputs) is read as 0.
constexpr int kFourBitGroupSizes[] = {32, 64, 128};

bool AcceptedGroupSize(int group_size) {
  return group_size == 0 || std::find(std::begin(kFourBitGroupSizes), std::end(kFourBitGroupSizes),
                                      group_size) != std::end(kFourBitGroupSizes);
}

std::vector<std::string> StringList(const YamlSection& section, std::string_view key) {
  return section.Has(key) ? section.GetList<std::string>(key) : std::vector<std::string>{};
}

// AWQ and GPTQ: 4-bit weights in groups of `group_size` inputs.
Quantization ReadFourBit(const YamlSection& q, QuantMethod method) {
  Quantization out;
  out.method = method;
  out.weight_bits = q.GetOr<int>("bits", q.GetOr<int>("w_bit", 4));
  if (out.weight_bits != 4) {
    q.Fail(q.Has("bits") ? "bits" : "w_bit",
           std::to_string(out.weight_bits) +
               "-bit weights: fleetsim models vLLM's 4-bit AWQ/GPTQ kernels only");
  }
  const std::string_view group_key = q.Has("group_size") ? "group_size" : "q_group_size";
  out.group_size = q.GetOr<int>(group_key, 128);
  if (out.group_size == -1) out.group_size = 0;
  if (!AcceptedGroupSize(out.group_size)) {
    q.Fail(group_key, "group size " + std::to_string(out.group_size) +
                          " has no vLLM kernel (accepted: -1, 32, 64, 128)");
  }
  out.zero_point =
      method == QuantMethod::kAwq ? q.GetOr<bool>("zero_point", true) : !q.GetOr<bool>("sym", true);
  out.not_converted = StringList(q, "modules_to_not_convert");
  // GPTQModel's per-module overrides: a "-:<regex>" key leaves those modules unquantized.
  if (auto dynamic = q.FindChild("dynamic")) {
    for (const std::string& key : dynamic->Keys()) {
      if (key.rfind("-:", 0) == 0) out.not_converted.push_back("re:" + key.substr(2));
    }
  }
  return out;
}

// compressed-tensors (llm-compressor): one config group for the Linear layers.
Quantization ReadCompressedTensors(const YamlSection& q) {
  const YamlSection groups = q.Child("config_groups");
  const std::vector<std::string> names = groups.Keys();
  if (names.size() != 1) {
    groups.Fail("", "fleetsim reads compressed-tensors configs with one config group, not " +
                        std::to_string(names.size()));
  }
  const YamlSection group = groups.Child(names.front());
  const YamlSection weights = group.Child("weights");
  Quantization out;
  out.weight_bits = weights.Get<int>("num_bits");
  const std::string type = weights.GetOr<std::string>("type", "int");
  const bool activations =
      group.Has("input_activations") && group.FindChild("input_activations")->node().IsMap();
  if (out.weight_bits == 8) {
    out.method = type == "float" ? QuantMethod::kFp8 : QuantMethod::kInt8;
    out.activations = activations;
  } else if (out.weight_bits == 4 && type == "int" && !activations) {
    out.method = QuantMethod::kGptq;  // W4A16 int, as vLLM's compressed-tensors wNa16 scheme
    out.group_size = weights.GetOr<int>("group_size", 128);
    if (out.group_size == -1) out.group_size = 0;
    if (!AcceptedGroupSize(out.group_size)) {
      weights.Fail("group_size", "group size " + std::to_string(out.group_size) +
                                     " has no vLLM kernel (accepted: -1, 32, 64, 128)");
    }
    out.zero_point = !weights.GetOr<bool>("symmetric", true);
  } else {
    weights.Fail("num_bits", std::to_string(out.weight_bits) + "-bit " + type +
                                 " weights: fleetsim models W8A8 (int or float) and W4A16 "
                                 "int schemes");
  }
  out.not_converted = StringList(q, "ignore");
  return out;
}

bool Matches(const std::string& pattern, std::string_view module) {
  if (pattern.rfind("re:", 0) == 0) {
    // A malformed pattern cannot match (vLLM would fail on it too, at load).
    try {
      return std::regex_search(std::string(module), std::regex(pattern.substr(3)));
    } catch (const std::regex_error&) {
      return false;
    }
  }
  return module.find(pattern) != std::string_view::npos;
}

}  // namespace

std::string_view NameOf(QuantMethod method) {
  switch (method) {
    case QuantMethod::kNone:
      return "none";
    case QuantMethod::kFp8:
      return "fp8";
    case QuantMethod::kInt8:
      return "int8";
    case QuantMethod::kAwq:
      return "awq";
    case QuantMethod::kGptq:
      return "gptq";
  }
  return "?";
}

std::optional<QuantMethod> ParseQuantMethod(std::string_view name) {
  if (name == "none") return QuantMethod::kNone;
  if (name == "fp8") return QuantMethod::kFp8;
  if (name == "int8") return QuantMethod::kInt8;
  if (name == "awq" || name == "awq_marlin") return QuantMethod::kAwq;
  if (name == "gptq" || name == "gptq_marlin") return QuantMethod::kGptq;
  return std::nullopt;
}

bool Quantization::Quantizes(std::string_view module) const {
  if (!IsQuantized()) return false;
  for (const std::string& pattern : not_converted) {
    if (Matches(pattern, module)) return false;
  }
  return true;
}

double Quantization::BytesPerWeight() const {
  switch (method) {
    case QuantMethod::kNone:
      return 2;
    case QuantMethod::kFp8:
    case QuantMethod::kInt8:
      return 1;  // + one fp32 scale per output column or tensor: negligible
    case QuantMethod::kAwq:
    case QuantMethod::kGptq: {
      // Packed 4-bit weights, plus per group of inputs one fp16 scale per column and, with
      // zero points, one 4-bit zero (AWQ qzeros / GPTQ qzeros, packed 8 per int32).
      if (group_size == 0) return 0.5;
      return 0.5 + (2.0 + (zero_point ? 0.5 : 0.0)) / group_size;
    }
  }
  return 2;
}

std::string Quantization::Describe() const {
  if (!IsQuantized()) return "none";
  std::string text =
      std::string(NameOf(method)) + ", " + std::to_string(weight_bits) + "-bit weights";
  if (group_size > 0) text += ", group " + std::to_string(group_size);
  if (zero_point) text += " (zero points)";
  text += activations ? ", W8A8" : (weight_bits == 4 ? ", W4A16" : ", W8A16");
  text += " (" + origin + ")";
  return text;
}

std::optional<Quantization> ReadQuantizationConfig(const YamlSection& root) {
  std::optional<YamlSection> q = root.FindChild("quantization_config");
  if (!q) {
    if (auto text = root.FindChild("text_config")) q = text->FindChild("quantization_config");
  }
  if (!q) return std::nullopt;
  const std::string name = q->Get<std::string>("quant_method");
  Quantization out;
  if (name == "awq" || name == "awq_marlin") {
    out = ReadFourBit(*q, QuantMethod::kAwq);
  } else if (name == "gptq" || name == "gptq_marlin") {
    out = ReadFourBit(*q, QuantMethod::kGptq);
  } else if (name == "fp8") {
    // vLLM's Fp8Config: 8-bit float weights; activation_scheme dynamic or static, both W8A8.
    out.method = QuantMethod::kFp8;
    out.weight_bits = 8;
    out.activations = true;
    out.not_converted = StringList(*q, "ignored_layers");
  } else if (name == "compressed-tensors") {
    out = ReadCompressedTensors(*q);
  } else {
    out.unmodelled_method = name;
  }
  out.origin = "config.json";
  out.file = q->file();
  out.line = q->line();
  return out;
}

Quantization QuantizationForMethod(QuantMethod method, int group_size) {
  Quantization out;
  out.method = method;
  out.origin = "engine setting";
  switch (method) {
    case QuantMethod::kNone:
      break;
    case QuantMethod::kFp8:
    case QuantMethod::kInt8:
      // vLLM's online --quantization fp8 quantizes weights per tensor and activations
      // dynamically: W8A8.
      out.weight_bits = 8;
      out.activations = true;
      break;
    case QuantMethod::kAwq:
    case QuantMethod::kGptq:
      out.weight_bits = 4;
      out.group_size = group_size;
      out.zero_point = method == QuantMethod::kAwq;
      // As the published 4-bit quantizers leave them: the GDN gate projection in_proj_ba
      // (2 x value heads wide, under GPTQModel's size threshold; an AWQ packing of it is
      // unverified) and a multimodal checkpoint's vision tower (AutoAWQ's
      // modules_to_not_convert for VL models).
      out.not_converted = {"linear_attn.in_proj_ba", "visual"};
      break;
  }
  return out;
}

}  // namespace fleetsim
