#include "perf/analytic_kernels.h"

#include <algorithm>
#include <cmath>

#include "model/cache_shapes.h"

namespace fleetsim {

AnalyticConstants AnalyticConstants::Uncalibrated() {
  AnalyticConstants c;
  c.gemm_efficiency = 0.75;
  c.gemm_half_m = 24;
  c.memory_efficiency = 0.75;
  c.launch_s = 4e-6;
  c.attention_efficiency = 0.45;
  c.kv_split_tokens = 512;
  c.attention_launch_s = 4e-6;
  c.attention_tile_s = 0;
  return c;
}

namespace {

// Work tiles of one attention call: per sequence and KV head, the query rows of its group.
double AttentionTiles(double batch, double query_tokens, double q_heads, double kv_heads) {
  return batch * kv_heads * std::ceil(query_tokens * q_heads / kv_heads / kAttentionTileRows);
}

}  // namespace

KernelRoofline::KernelRoofline(const HardwareSpec& hardware, Dtype dtype, bool split_kv,
                               AnalyticConstants constants)
    : c_(constants), split_kv_(split_kv) {
  const auto flops = hardware.peak_flops.find(dtype == Dtype::kFloat16 ? "fp16" : "bf16");
  peak_flops_ = flops != hardware.peak_flops.end() ? flops->second.value
                                                   : hardware.peak_flops.begin()->second.value;
  bandwidth_ = hardware.memory_bandwidth_bytes_per_s.value;
  compute_units_ = hardware.compute_units.value;
  act_bytes_ = BytesOf(dtype);
}

double KernelRoofline::RooflineUs(double flops, double bytes, double occupancy) const {
  const double compute = flops / (peak_flops_ * c_.gemm_efficiency);
  const double memory = bytes / (bandwidth_ * c_.memory_efficiency);
  return (std::max(compute, memory) / std::max(occupancy, 1e-3) + c_.launch_s) * 1e6;
}

double KernelRoofline::GemmUs(double m, double n, double k) const {
  const double efficiency = c_.gemm_efficiency * m / (m + c_.gemm_half_m);
  const double compute = 2 * m * n * k / (peak_flops_ * efficiency);
  const double memory = (m * k + n * k + m * n) * act_bytes_ / (bandwidth_ * c_.memory_efficiency);
  return (std::max(compute, memory) + c_.launch_s) * 1e6;
}

double KernelRoofline::ElementwiseUs(double bytes) const {
  return (bytes / (bandwidth_ * c_.memory_efficiency) + c_.launch_s) * 1e6;
}

double KernelRoofline::AttentionPrefillUs(double batch, double chunk, double history,
                                          double q_heads, double kv_heads, double head_dim) const {
  const double context = history + chunk / 2;  // causal: half the chunk on average
  const double flops = batch * 4 * chunk * context * q_heads * head_dim;
  const double bytes =
      batch * ((history + chunk) * kv_heads * 2 * head_dim + 2 * chunk * q_heads * head_dim) *
      act_bytes_;
  const double compute = flops / (peak_flops_ * c_.attention_efficiency);
  const double memory = bytes / (bandwidth_ * c_.memory_efficiency);
  const double tiles = AttentionTiles(batch, chunk, q_heads, kv_heads);
  return (std::max(compute, memory) + c_.attention_launch_s +
          tiles / compute_units_ * c_.attention_tile_s) *
         1e6;
}

double KernelRoofline::AttentionDecodeUs(double batch, double kv, double q_heads, double kv_heads,
                                         double head_dim) const {
  const double bytes = batch * kv * kv_heads * 2 * head_dim * act_bytes_;
  const double flops = batch * 4 * kv * q_heads * head_dim;
  // Work units: sequences x KV heads, times KV splits where the backend splits.
  double splits = 1;
  if (split_kv_) {
    const double max_splits =
        std::max(1.0, std::ceil(kv / static_cast<double>(c_.kv_split_tokens)));
    splits = std::min(max_splits, std::max(1.0, std::ceil(compute_units_ / (batch * kv_heads))));
  }
  const double occupancy = std::min(1.0, batch * kv_heads * splits / compute_units_);
  const double compute = flops / (peak_flops_ * c_.attention_efficiency);
  const double memory = bytes / (bandwidth_ * c_.memory_efficiency);
  const double tiles = AttentionTiles(batch, 1, q_heads, kv_heads);
  return (std::max(compute, memory) / occupancy + c_.attention_launch_s +
          tiles / compute_units_ * c_.attention_tile_s) *
         1e6;
}

double KernelRoofline::MoeUs(double tokens, double hidden, double inter, double top_k,
                             double activated, double shared_inter) const {
  const double flops = 2 * tokens * (top_k * 3 * hidden * inter + 3 * hidden * shared_inter);
  const double weights = (activated * 3 * hidden * inter + 3 * hidden * shared_inter) * act_bytes_;
  const double rows_per_expert = tokens * top_k / std::max(1.0, activated);
  const double efficiency =
      c_.gemm_efficiency * rows_per_expert / (rows_per_expert + c_.gemm_half_m);
  const double compute = flops / (peak_flops_ * efficiency);
  const double memory =
      (weights + 4 * tokens * hidden * act_bytes_) / (bandwidth_ * c_.memory_efficiency);
  return (std::max(compute, memory) + 4 * c_.launch_s) * 1e6;
}

AnalyticKernels::AnalyticKernels(const ModelCard& card, const HardwareSpec& hardware, int tp,
                                 bool split_kv, AnalyticConstants constants)
    : card_(card),
      tp_(tp),
      r_(hardware, card.dtype, split_kv, constants),
      act_bytes_(BytesOf(card.dtype)) {}

double AnalyticKernels::DenseUs(const std::string& kernel, int64_t tokens) const {
  const auto t = static_cast<double>(tokens);
  const double h = static_cast<double>(card_.hidden_size);
  const double tp = tp_;
  const AttentionShape& a = card_.attention;
  const double q_heads = a.num_q_heads / tp;
  const double kv_heads = KvHeadsPerRank(card_, tp_);
  if (kernel == "embedding") return r_.ElementwiseUs(2 * t * h * act_bytes_);
  if (kernel == "layernorm" || kernel == "final_layernorm")
    return r_.ElementwiseUs(2 * t * h * act_bytes_ + h * 4);
  if (kernel == "qkv_proj") {
    return r_.GemmUs(
        t, q_heads * a.head_dim * (a.output_gate ? 2 : 1) + kv_heads * (a.head_dim + a.v_head_dim),
        h);
  }
  if (kernel == "qk_norm")
    return a.qk_norm ? r_.ElementwiseUs(2 * t * (q_heads + kv_heads) * a.head_dim * act_bytes_)
                     : -1;
  if (kernel == "rotary_emb")
    return r_.ElementwiseUs(2 * t * (q_heads + kv_heads) * a.head_dim * act_bytes_);
  if (kernel == "o_proj") return r_.GemmUs(t, h, q_heads * a.v_head_dim);
  if (kernel == "gate_up_proj")
    return r_.GemmUs(t, 2 * static_cast<double>(card_.intermediate_size) / tp, h);
  if (kernel == "act_fn")
    return r_.ElementwiseUs(3 * t * static_cast<double>(card_.intermediate_size) / tp * act_bytes_);
  if (kernel == "down_proj")
    return r_.GemmUs(t, h, static_cast<double>(card_.intermediate_size) / tp);
  if (!card_.linear) return -1;
  const LinearAttentionShape& g = *card_.linear;
  const double key = g.num_k_heads * g.k_head_dim / tp;
  const double value = g.num_v_heads * g.v_head_dim / tp;
  if (kernel == "gdn_in_proj") return r_.GemmUs(t, 2 * key + 2 * value + 2 * g.num_v_heads / tp, h);
  if (kernel == "gdn_out_proj") return r_.GemmUs(t, h, value);
  if (kernel == "gdn_norm") return r_.ElementwiseUs(3 * t * value * act_bytes_);
  if (kernel == "gdn_glue") return r_.ElementwiseUs(4 * t * (2 * key + 2 * value) * act_bytes_);
  return -1;
}

double AnalyticKernels::PerSequenceUs(const std::string& kernel, int64_t sequences) const {
  const auto s = static_cast<double>(sequences);
  const double vocab = static_cast<double>(card_.vocab_size);
  if (kernel == "lm_head") return r_.GemmUs(s, vocab / tp_, static_cast<double>(card_.hidden_size));
  // Sampling reads the gathered fp32 logits a few times (softmax, top-k/p, draw).
  if (kernel == "sampler") return r_.ElementwiseUs(3 * s * vocab * 4);
  return -1;
}

double AnalyticKernels::AttentionPrefillUs(int64_t chunk, int64_t kv_prefill) const {
  const AttentionShape& a = card_.attention;
  return r_.AttentionPrefillUs(1, static_cast<double>(chunk), static_cast<double>(kv_prefill),
                               a.num_q_heads / static_cast<double>(tp_), KvHeadsPerRank(card_, tp_),
                               (a.head_dim + a.v_head_dim) / 2.0);
}

double AnalyticKernels::AttentionDecodeUs(int64_t n, int64_t kv) const {
  const AttentionShape& a = card_.attention;
  return r_.AttentionDecodeUs(static_cast<double>(n), static_cast<double>(kv),
                              a.num_q_heads / static_cast<double>(tp_), KvHeadsPerRank(card_, tp_),
                              (a.head_dim + a.v_head_dim) / 2.0);
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
    return t > 0 ? r_.RooflineUs(2 * t * conv_dim * g.conv_kernel, 2 * t * conv_dim * act_bytes_)
                 : -1;
  }
  if (kernel == "gdn_post_conv")
    return t > 0 ? r_.ElementwiseUs(3 * t * conv_dim * act_bytes_) : -1;
  if (kernel == "gdn_prefill") {
    if (t <= 0) return -1;
    // Chunked delta rule (64-token chunks): intra-chunk attention plus state updates.
    const double flops =
        t * v_heads *
        (4.0 * g.k_head_dim * g.v_head_dim + 4.0 * 64 * (g.k_head_dim + g.v_head_dim));
    const double bytes =
        t * (conv_dim + 2 * v_heads * g.v_head_dim) * act_bytes_ + 2 * sequences * state_bytes;
    return r_.RooflineUs(flops, bytes, std::min(1.0, sequences * v_heads / r_.compute_units() * 4));
  }
  const bool decode_only = t <= 0;
  if ((kernel == "gdn_conv_decode" || kernel == "gdn_decode") && (!decode_only || n <= 0))
    return -1;
  if (kernel == "gdn_decode_mixed" && (decode_only || n <= 0)) return -1;
  if (kernel == "gdn_conv_decode") {
    return r_.RooflineUs(2 * n * conv_dim * g.conv_kernel,
                         n * conv_dim * (g.conv_kernel + 1) * act_bytes_);
  }
  if (kernel == "gdn_decode" || kernel == "gdn_decode_mixed") {
    // The recurrent step reads and writes each sequence's fp32 state.
    const double bytes = 2 * n * state_bytes + n * (conv_dim + v_heads * g.v_head_dim) * act_bytes_;
    const double flops = n * v_heads * 6.0 * g.k_head_dim * g.v_head_dim;
    return r_.RooflineUs(flops, bytes, std::min(1.0, n * v_heads / r_.compute_units()));
  }
  return -1;
}

double AnalyticKernels::MoeUs(int64_t tokens, int64_t activated) const {
  if (!card_.moe) return -1;
  const MoeShape& m = *card_.moe;
  return r_.MoeUs(static_cast<double>(tokens), static_cast<double>(card_.hidden_size),
                  static_cast<double>(m.expert_intermediate) / tp_, m.experts_per_token,
                  static_cast<double>(activated),
                  static_cast<double>(m.shared_expert_intermediate) / tp_);
}

}  // namespace fleetsim
