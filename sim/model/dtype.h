// Numeric storage types of weights, KV cache and recurrent state, and their sizes.
#pragma once

#include <optional>
#include <string_view>

namespace fleetsim {

enum class Dtype { kBfloat16, kFloat16, kFloat32, kFp8 };

int BytesOf(Dtype dtype);
std::string_view NameOf(Dtype dtype);

// Accepts Hugging Face and vLLM spellings: bfloat16/bf16, float16/fp16/half,
// float32/fp32/float, fp8/fp8_e4m3/float8_e4m3fn.
std::optional<Dtype> ParseDtype(std::string_view name);

}  // namespace fleetsim
