#include "model/dtype.h"

#include <array>
#include <utility>

namespace fleetsim {

int BytesOf(Dtype dtype) {
  switch (dtype) {
    case Dtype::kBfloat16:
    case Dtype::kFloat16:
      return 2;
    case Dtype::kFloat32:
      return 4;
    case Dtype::kFp8:
      return 1;
  }
  return 0;
}

std::string_view NameOf(Dtype dtype) {
  switch (dtype) {
    case Dtype::kBfloat16:
      return "bfloat16";
    case Dtype::kFloat16:
      return "float16";
    case Dtype::kFloat32:
      return "float32";
    case Dtype::kFp8:
      return "fp8";
  }
  return "?";
}

std::optional<Dtype> ParseDtype(std::string_view name) {
  static constexpr std::array<std::pair<std::string_view, Dtype>, 11> kNames{{
      {"bfloat16", Dtype::kBfloat16},
      {"bf16", Dtype::kBfloat16},
      {"float16", Dtype::kFloat16},
      {"fp16", Dtype::kFloat16},
      {"half", Dtype::kFloat16},
      {"float32", Dtype::kFloat32},
      {"fp32", Dtype::kFloat32},
      {"float", Dtype::kFloat32},
      {"fp8", Dtype::kFp8},
      {"fp8_e4m3", Dtype::kFp8},
      {"float8_e4m3fn", Dtype::kFp8},
  }};
  for (const auto& [text, dtype] : kNames) {
    if (text == name) return dtype;
  }
  return std::nullopt;
}

}  // namespace fleetsim
