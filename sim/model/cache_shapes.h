// Per-rank cache shapes of one model at one tensor-parallel degree: the attention page
// per token and the gated-DeltaNet state (ENGINE_SEMANTICS.md section 1; vLLM
// mamba_utils.py gated_delta_net_state_shape).
//
//   27B, TP 1: conv (3 x 10240) bf16 = 61,440 B; ssm (48 x 128 x 128) fp32 = 3,145,728 B;
//   attention 4 KV heads x (256 + 256) x 2 B = 4,096 B per token per layer.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "model/dtype.h"
#include "model/model_card.h"

namespace fleetsim {

// A TP degree the model's heads cannot be split into; `field` is the config field.
struct TensorParallelViolation {
  std::string field;
  std::string message;
};
std::optional<TensorParallelViolation> CheckTensorParallel(const ModelCard& card, int tp);

int KvHeadsPerRank(const ModelCard& card, int tp);
// Bytes one token occupies in one attention layer's cache on one rank (K and V).
int64_t AttentionBytesPerTokenPerLayer(const ModelCard& card, int tp, Dtype kv_dtype);

struct GdnStateShape {
  std::array<int64_t, 2> conv{};  // (K - 1 + num_spec) x conv_dim / tp
  std::array<int64_t, 3> ssm{};   // Hv / tp x Dv x Dk
  Dtype conv_dtype = Dtype::kBfloat16;
  Dtype ssm_dtype = Dtype::kBfloat16;

  int64_t ConvBytes() const { return conv[0] * conv[1] * BytesOf(conv_dtype); }
  int64_t SsmBytes() const { return ssm[0] * ssm[1] * ssm[2] * BytesOf(ssm_dtype); }
  // One sequence's state in one GDN layer: vLLM's unpadded mamba page.
  int64_t PageBytes() const { return ConvBytes() + SsmBytes(); }
};
GdnStateShape GdnState(const LinearAttentionShape& shape, int tp, int num_spec, Dtype conv_dtype,
                       Dtype ssm_dtype);

}  // namespace fleetsim
