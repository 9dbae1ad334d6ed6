#include "model/cache_shapes.h"

#include <algorithm>

namespace fleetsim {
namespace {

std::string Divides(int tp, const std::string& what, int64_t value) {
  return "tensor parallel size " + std::to_string(tp) + " does not divide " + what + " (" +
         std::to_string(value) + ")";
}

}  // namespace

std::optional<TensorParallelViolation> CheckTensorParallel(const ModelCard& card, int tp) {
  if (tp <= 0) return TensorParallelViolation{"tensor_parallel_size", "must be positive"};
  const AttentionShape& a = card.attention;
  if (a.num_q_heads % tp != 0) {
    return TensorParallelViolation{"num_attention_heads",
                                   Divides(tp, "num_attention_heads", a.num_q_heads)};
  }
  // KV heads are split when tp <= kv_heads and replicated in whole copies above that.
  if (tp <= a.num_kv_heads ? a.num_kv_heads % tp != 0 : tp % a.num_kv_heads != 0) {
    return TensorParallelViolation{"num_key_value_heads",
                                   Divides(tp, "num_key_value_heads", a.num_kv_heads) +
                                       (tp > a.num_kv_heads ? " into whole replicas" : "")};
  }
  if (card.linear) {
    const LinearAttentionShape& g = *card.linear;
    if (g.num_k_heads % tp != 0) {
      return TensorParallelViolation{"linear_num_key_heads",
                                     Divides(tp, "linear_num_key_heads", g.num_k_heads)};
    }
    if (g.num_v_heads % tp != 0) {
      return TensorParallelViolation{"linear_num_value_heads",
                                     Divides(tp, "linear_num_value_heads", g.num_v_heads)};
    }
    if (g.ConvDim() % tp != 0) {
      return TensorParallelViolation{
          "linear_conv_dim", Divides(tp, "the GDN conv dimension 2*Dk*Hk + Dv*Hv", g.ConvDim())};
    }
  }
  return std::nullopt;
}

int KvHeadsPerRank(const ModelCard& card, int tp) {
  return std::max(1, card.attention.num_kv_heads / tp);
}

int64_t AttentionBytesPerTokenPerLayer(const ModelCard& card, int tp, Dtype kv_dtype) {
  const AttentionShape& a = card.attention;
  return int64_t{KvHeadsPerRank(card, tp)} * (a.head_dim + a.v_head_dim) * BytesOf(kv_dtype);
}

GdnStateShape GdnState(const LinearAttentionShape& shape, int tp, int num_spec, Dtype conv_dtype,
                       Dtype ssm_dtype) {
  GdnStateShape state;
  state.conv = {shape.conv_kernel - 1 + num_spec, shape.ConvDim() / tp};
  state.ssm = {shape.num_v_heads / tp, shape.v_head_dim, shape.k_head_dim};
  state.conv_dtype = conv_dtype;
  state.ssm_dtype = ssm_dtype;
  return state;
}

}  // namespace fleetsim
