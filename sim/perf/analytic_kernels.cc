#include "perf/analytic_kernels.h"

#include <algorithm>
#include <cmath>

#include "model/cache_shapes.h"

namespace fleetsim {

AnalyticKernels::AnalyticKernels(const ModelCard& card, const HardwareSpec& hardware, int tp,
                                 bool split_kv, AnalyticConstants constants)
    : card_(card), tp_(tp), split_kv_(split_kv), c_(constants) {
  const auto flops = hardware.peak_flops.find(card.dtype == Dtype::kFloat16 ? "fp16" : "bf16");
  peak_flops_ = flops != hardware.peak_flops.end() ? flops->second.value
                                                   : hardware.peak_flops.begin()->second.value;
  bandwidth_ = hardware.memory_bandwidth_bytes_per_s.value;
  compute_units_ = hardware.compute_units.value;
  act_bytes_ = BytesOf(card.dtype);
}

double AnalyticKernels::Roofline(double flops, double bytes, double occupancy) const {
  const double compute = flops / (peak_flops_ * c_.gemm_efficiency);
  const double memory = bytes / (bandwidth_ * c_.memory_efficiency);
  return (std::max(compute, memory) / std::max(occupancy, 1e-3) + c_.launch_s) * 1e6;
}

double AnalyticKernels::GemmUs(double m, double n, double k) const {
  const double efficiency = c_.gemm_efficiency * m / (m + c_.gemm_half_m);
  const double compute = 2 * m * n * k / (peak_flops_ * efficiency);
  const double memory = (m * k + n * k + m * n) * act_bytes_ / (bandwidth_ * c_.memory_efficiency);
  return (std::max(compute, memory) + c_.launch_s) * 1e6;
}

double AnalyticKernels::ElementwiseUs(double bytes) const {
  return (bytes / (bandwidth_ * c_.memory_efficiency) + c_.launch_s) * 1e6;
}

double AnalyticKernels::DenseUs(const std::string& kernel, int64_t tokens) const {
  const auto t = static_cast<double>(tokens);
  const double h = static_cast<double>(card_.hidden_size);
  const double tp = tp_;
  const AttentionShape& a = card_.attention;
  const double q_heads = a.num_q_heads / tp;
  const double kv_heads = KvHeadsPerRank(card_, tp_);
  if (kernel == "embedding") return ElementwiseUs(2 * t * h * act_bytes_);
  if (kernel == "layernorm" || kernel == "final_layernorm")
    return ElementwiseUs(2 * t * h * act_bytes_ + h * 4);
  if (kernel == "qkv_proj") {
    return GemmUs(
        t, q_heads * a.head_dim * (a.output_gate ? 2 : 1) + kv_heads * (a.head_dim + a.v_head_dim),
        h);
  }
  if (kernel == "qk_norm")
    return a.qk_norm ? ElementwiseUs(2 * t * (q_heads + kv_heads) * a.head_dim * act_bytes_) : -1;
  if (kernel == "rotary_emb")
    return ElementwiseUs(2 * t * (q_heads + kv_heads) * a.head_dim * act_bytes_);
  if (kernel == "o_proj") return GemmUs(t, h, q_heads * a.v_head_dim);
  if (kernel == "gate_up_proj")
    return GemmUs(t, 2 * static_cast<double>(card_.intermediate_size) / tp, h);
  if (kernel == "act_fn")
    return ElementwiseUs(3 * t * static_cast<double>(card_.intermediate_size) / tp * act_bytes_);
  if (kernel == "down_proj") return GemmUs(t, h, static_cast<double>(card_.intermediate_size) / tp);
  if (!card_.linear) return -1;
  const LinearAttentionShape& g = *card_.linear;
  const double key = g.num_k_heads * g.k_head_dim / tp;
  const double value = g.num_v_heads * g.v_head_dim / tp;
  if (kernel == "gdn_in_proj") return GemmUs(t, 2 * key + 2 * value + 2 * g.num_v_heads / tp, h);
  if (kernel == "gdn_out_proj") return GemmUs(t, h, value);
  if (kernel == "gdn_norm") return ElementwiseUs(3 * t * value * act_bytes_);
  if (kernel == "gdn_glue") return ElementwiseUs(4 * t * (2 * key + 2 * value) * act_bytes_);
  return -1;
}

double AnalyticKernels::PerSequenceUs(const std::string& kernel, int64_t sequences) const {
  const auto s = static_cast<double>(sequences);
  const double vocab = static_cast<double>(card_.vocab_size);
  if (kernel == "lm_head") return GemmUs(s, vocab / tp_, static_cast<double>(card_.hidden_size));
  // Sampling reads the gathered fp32 logits a few times (softmax, top-k/p, draw).
  if (kernel == "sampler") return ElementwiseUs(3 * s * vocab * 4);
  return -1;
}

double AnalyticKernels::AttentionPrefillUs(int64_t chunk, int64_t kv_prefill) const {
  const AttentionShape& a = card_.attention;
  const double q_heads = a.num_q_heads / static_cast<double>(tp_);
  const double kv_heads = KvHeadsPerRank(card_, tp_);
  const auto c = static_cast<double>(chunk);
  const double context = static_cast<double>(kv_prefill) + c / 2;  // causal: half the chunk
  const double flops = 2 * c * context * q_heads * (a.head_dim + a.v_head_dim);
  const double bytes =
      (static_cast<double>(kv_prefill) + c) * kv_heads * (a.head_dim + a.v_head_dim) * act_bytes_ +
      2 * c * q_heads * a.head_dim * act_bytes_;
  const double compute = flops / (peak_flops_ * c_.attention_efficiency);
  const double memory = bytes / (bandwidth_ * c_.memory_efficiency);
  return (std::max(compute, memory) + c_.launch_s) * 1e6;
}

double AnalyticKernels::AttentionDecodeUs(int64_t n, int64_t kv) const {
  const AttentionShape& a = card_.attention;
  const double kv_heads = KvHeadsPerRank(card_, tp_);
  const double q_heads = a.num_q_heads / static_cast<double>(tp_);
  const double seqs = static_cast<double>(n);
  const double bytes =
      seqs * static_cast<double>(kv) * kv_heads * (a.head_dim + a.v_head_dim) * act_bytes_;
  const double flops = 2 * seqs * static_cast<double>(kv) * q_heads * (a.head_dim + a.v_head_dim);
  // Work units: sequences x KV heads, times KV splits where the backend splits.
  double splits = 1;
  if (split_kv_) {
    const double max_splits =
        std::max(1.0, std::ceil(static_cast<double>(kv) / static_cast<double>(c_.kv_split_tokens)));
    splits = std::min(max_splits, std::max(1.0, std::ceil(compute_units_ / (seqs * kv_heads))));
  }
  const double occupancy = std::min(1.0, seqs * kv_heads * splits / compute_units_);
  const double compute = flops / (peak_flops_ * c_.attention_efficiency);
  const double memory = bytes / (bandwidth_ * c_.memory_efficiency);
  return (std::max(compute, memory) / occupancy + c_.launch_s) * 1e6;
}

double AnalyticKernels::GdnUs(const std::string& kernel, int64_t prefill_tokens,
                              int64_t n_decode) const {
  if (!card_.linear) return -1;
  const LinearAttentionShape& g = *card_.linear;
  const double tp = tp_;
  const auto t = static_cast<double>(prefill_tokens);
  const auto n = static_cast<double>(n_decode);
  const double conv_dim = static_cast<double>(g.ConvDim()) / tp;
  const double v_heads = g.num_v_heads / tp;
  // The recurrent state is float32: Hv x Dv x Dk per sequence.
  const double state_bytes = v_heads * g.v_head_dim * g.k_head_dim * 4;
  const double sequences =
      std::max(1.0, std::ceil(t / 2048));  // prefill sequences, unknown: ~one per 2k tokens
  if (kernel == "gdn_conv_prefill") {
    return t > 0 ? Roofline(2 * t * conv_dim * g.conv_kernel, 2 * t * conv_dim * act_bytes_) : -1;
  }
  if (kernel == "gdn_post_conv") return t > 0 ? ElementwiseUs(3 * t * conv_dim * act_bytes_) : -1;
  if (kernel == "gdn_prefill") {
    if (t <= 0) return -1;
    // Chunked delta rule (64-token chunks): intra-chunk attention plus state updates.
    const double flops =
        t * v_heads *
        (4.0 * g.k_head_dim * g.v_head_dim + 4.0 * 64 * (g.k_head_dim + g.v_head_dim));
    const double bytes =
        t * (conv_dim + 2 * v_heads * g.v_head_dim) * act_bytes_ + 2 * sequences * state_bytes;
    return Roofline(flops, bytes, std::min(1.0, sequences * v_heads / compute_units_ * 4));
  }
  const bool decode_only = t <= 0;
  if ((kernel == "gdn_conv_decode" || kernel == "gdn_decode") && (!decode_only || n <= 0))
    return -1;
  if (kernel == "gdn_decode_mixed" && (decode_only || n <= 0)) return -1;
  if (kernel == "gdn_conv_decode") {
    return Roofline(2 * n * conv_dim * g.conv_kernel,
                    n * conv_dim * (g.conv_kernel + 1) * act_bytes_);
  }
  if (kernel == "gdn_decode" || kernel == "gdn_decode_mixed") {
    // The recurrent step reads and writes each sequence's fp32 state.
    const double bytes = 2 * n * state_bytes + n * (conv_dim + v_heads * g.v_head_dim) * act_bytes_;
    const double flops = n * v_heads * 6.0 * g.k_head_dim * g.v_head_dim;
    return Roofline(flops, bytes, std::min(1.0, n * v_heads / compute_units_));
  }
  return -1;
}

double AnalyticKernels::MoeUs(int64_t tokens, int64_t activated) const {
  if (!card_.moe) return -1;
  const MoeShape& m = *card_.moe;
  const double h = static_cast<double>(card_.hidden_size);
  const double inter = static_cast<double>(m.expert_intermediate) / tp_;
  const double shared = static_cast<double>(m.shared_expert_intermediate) / tp_;
  const auto t = static_cast<double>(tokens);
  const double flops = 2 * t * (m.experts_per_token * 3 * h * inter + 3 * h * shared);
  const double weights =
      (static_cast<double>(activated) * 3 * h * inter + 3 * h * shared) * act_bytes_;
  const double rows_per_expert =
      t * m.experts_per_token / std::max<double>(1, static_cast<double>(activated));
  const double efficiency =
      c_.gemm_efficiency * rows_per_expert / (rows_per_expert + c_.gemm_half_m);
  const double compute = flops / (peak_flops_ * efficiency);
  const double memory = (weights + 4 * t * h * act_bytes_) / (bandwidth_ * c_.memory_efficiency);
  return (std::max(compute, memory) + 4 * c_.launch_s) * 1e6;
}

}  // namespace fleetsim
