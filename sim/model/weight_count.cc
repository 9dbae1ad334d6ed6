#include "model/weight_count.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstddef>
#include <string>

namespace fleetsim {
namespace {

// A parameter tensor either split across TP ranks or replicated on each; `quantized` is
// the part of `sharded` stored in the quantized format (linear projections the
// quantization covers; all of them are TP-sharded).
// An int64_t whose arithmetic throws on overflow, for the check that a card's counts fit
// (WeightCountOverflows): the same formulas as the counts, each step checked.
class CheckedInt {
 public:
  struct Overflow {};
  CheckedInt(int64_t v = 0) : v_(v) {}  // NOLINT: implicit, as the counts' int64_t is

  friend CheckedInt operator+(CheckedInt a, CheckedInt b) {
    int64_t r = 0;
    if (__builtin_add_overflow(a.v_, b.v_, &r)) throw Overflow{};
    return r;
  }
  friend CheckedInt operator-(CheckedInt a, CheckedInt b) {
    int64_t r = 0;
    if (__builtin_sub_overflow(a.v_, b.v_, &r)) throw Overflow{};
    return r;
  }
  friend CheckedInt operator*(CheckedInt a, CheckedInt b) {
    int64_t r = 0;
    if (__builtin_mul_overflow(a.v_, b.v_, &r)) throw Overflow{};
    return r;
  }
  friend CheckedInt operator/(CheckedInt a, CheckedInt b) {
    if (b.v_ == 0 || (a.v_ == INT64_MIN && b.v_ == -1)) throw Overflow{};
    return a.v_ / b.v_;
  }
  CheckedInt& operator+=(CheckedInt b) { return *this = *this + b; }
  CheckedInt& operator-=(CheckedInt b) { return *this = *this - b; }

 private:
  int64_t v_;
};

// N is int64_t for the counts, and CheckedInt for the check that they fit.
template <typename N>
struct Params {
  N sharded = 0;
  N replicated = 0;
  N quantized = 0;

  Params& operator+=(const Params& other) {
    sharded += other.sharded;
    replicated += other.replicated;
    quantized += other.quantized;
    return *this;
  }
  N Total() const { return sharded + replicated; }
  N PerRank(int tp) const { return sharded / tp + replicated; }
  N QuantizedPerRank(int tp) const { return quantized / tp; }
};

// A linear projection's weights (sharded): quantized when the quantization covers the
// module of that checkpoint name.
template <typename N>
void AddLinear(Params<N>& p, N params, const Quantization& quant, const std::string& module) {
  p.sharded += params;
  if (quant.Quantizes(module)) p.quantized += params;
}

template <typename N>
Params<N> AttentionParams(const ModelCard& card, int tp, const Quantization& quant,
                          const std::string& layer) {
  const AttentionShape& a = card.attention;
  const auto h = static_cast<N>(card.hidden_size);
  const N q_width = static_cast<N>(a.num_q_heads) * a.head_dim * (a.output_gate ? 2 : 1);
  // K and V: whole KV heads per rank, replicated when tp > kv_heads. Counting them as
  // sharded with kv_heads_per_rank * tp heads gives exact per-rank bytes.
  const N kv_heads_stored = static_cast<N>(std::max(1, a.num_kv_heads / tp)) * tp;
  const N kv_width = kv_heads_stored * (a.head_dim + a.v_head_dim);
  Params<N> p;
  AddLinear(p, h * q_width + h * kv_width, quant, layer + "self_attn.qkv_proj");
  AddLinear(p, static_cast<N>(a.num_q_heads) * a.v_head_dim * h, quant, layer + "self_attn.o_proj");
  if (a.bias) p.sharded += q_width + kv_width;
  if (a.qk_norm) p.replicated += 2 * static_cast<N>(a.head_dim);
  return p;
}

// Unsharded count for reporting: K/V once, not once per replica.
template <typename N>
N AttentionParamsUnsharded(const ModelCard& card) {
  const AttentionShape& a = card.attention;
  const auto h = static_cast<N>(card.hidden_size);
  const N q_width = static_cast<N>(a.num_q_heads) * a.head_dim * (a.output_gate ? 2 : 1);
  const N kv_width = static_cast<N>(a.num_kv_heads) * (a.head_dim + a.v_head_dim);
  N total = h * q_width + h * kv_width + static_cast<N>(a.num_q_heads) * a.v_head_dim * h;
  if (a.bias) total += q_width + kv_width;
  if (a.qk_norm) total += 2 * static_cast<N>(a.head_dim);
  return total;
}

template <typename N>
Params<N> LinearAttentionParams(const ModelCard& card, const Quantization& quant,
                                const std::string& layer) {
  const LinearAttentionShape& g = *card.linear;
  const auto h = static_cast<N>(card.hidden_size);
  const N key_width = static_cast<N>(g.num_k_heads) * g.k_head_dim;
  const N value_width = static_cast<N>(g.num_v_heads) * g.v_head_dim;
  Params<N> p;
  AddLinear(p, h * (2 * key_width + 2 * value_width), quant, layer + "linear_attn.in_proj_qkvz");
  AddLinear(p, h * 2 * g.num_v_heads, quant, layer + "linear_attn.in_proj_ba");
  p.sharded += g.ConvDim() * g.conv_kernel           // conv1d
               + 2 * static_cast<N>(g.num_v_heads);  // dt_bias, A_log
  AddLinear(p, value_width * h, quant, layer + "linear_attn.out_proj");
  p.replicated = g.v_head_dim;  // gated RMSNorm weight
  return p;
}

template <typename N>
Params<N> MlpParams(const ModelCard& card, bool moe_layer, const Quantization& quant,
                    const std::string& layer) {
  const auto h = static_cast<N>(card.hidden_size);
  Params<N> p;
  if (!moe_layer) {
    AddLinear(p, 2 * h * card.intermediate_size, quant, layer + "mlp.gate_up_proj");
    AddLinear(p, h * card.intermediate_size, quant, layer + "mlp.down_proj");
    return p;
  }
  const MoeShape& m = *card.moe;
  AddLinear(p, static_cast<N>(m.num_experts) * 3 * h * m.expert_intermediate, quant,
            layer + "mlp.experts");
  AddLinear(p, 3 * h * m.shared_expert_intermediate, quant, layer + "mlp.shared_expert");
  p.replicated = h * m.num_experts;  // router
  if (m.shared_expert_intermediate > 0 && m.num_shared_experts == 0) {
    p.replicated += h;  // Qwen's sigmoid gate on the shared expert
  }
  return p;
}

template <typename N>
Params<N> VisionParams(const VisionTower& v, const Quantization& quant) {
  const auto h = static_cast<N>(v.hidden_size);
  const N merged = h * v.spatial_merge_size * v.spatial_merge_size;
  Params<N> p;
  p.sharded +=
      static_cast<N>(v.in_channels) * v.temporal_patch_size * v.patch_size * v.patch_size * h;
  p.replicated += h + v.num_position_embeddings * h;  // patch bias, position table
  // The blocks' four projections are linear layers (quantized unless excluded); their
  // biases are not.
  const N weights = h * 3 * h + h * h + 2 * h * v.intermediate_size;
  const N biases = 3 * h + h + v.intermediate_size + h;
  AddLinear(p, v.depth * weights, quant, "visual.blocks.0.attn.qkv");
  p.sharded += v.depth * biases;
  p.replicated += static_cast<N>(v.depth) * 4 * h;  // two LayerNorms, weight and bias
  const N merger = (merged * merged + merged) + (merged * v.out_hidden_size + v.out_hidden_size);
  p.sharded += (1 + v.num_deepstack_mergers) * merger;
  p.replicated += 2 * h + static_cast<N>(v.num_deepstack_mergers) * 2 * merged;
  return p;
}

// Qwen3.5's MTP module (qwen3_5_mtp.py, Qwen3_5MultiTokenPredictor): fc (2H -> H,
// ColumnParallelLinear with gather_output: split by TP), pre_fc_norm_hidden,
// pre_fc_norm_embedding and the final norm, and mtp_layers full-attention decoder layers
// (Qwen3_5DecoderLayer, layer_type "full_attention") with their two norms and the model's
// MLP kind. embed_tokens and lm_head are shared with the target (not counted).
template <typename N>
Params<N> MtpParams(const ModelCard& card, int tp, const Quantization& quant, N& unsharded_extra) {
  const auto h = static_cast<N>(card.hidden_size);
  Params<N> p;
  AddLinear(p, 2 * h * h, quant, "mtp.fc");
  p.replicated += 3 * h;
  const bool moe = card.CountMoeLayers() > 0;
  for (int i = 0; i < card.mtp_layers; ++i) {
    const std::string layer = "mtp.layers." + std::to_string(i) + ".";
    p.replicated += 2 * h;  // input and post-attention norms
    const Params<N> attention = AttentionParams<N>(card, tp, quant, layer);
    p += attention;
    unsharded_extra += AttentionParamsUnsharded<N>(card) - attention.Total();
    p += MlpParams<N>(card, moe, quant, layer);
  }
  return p;
}

// The text tower's parameters (and, in `unsharded_extra`, its K/V heads counted once
// rather than per replica).
template <typename N>
Params<N> TextParams(const ModelCard& card, int tp, const Quantization& quant, N& unsharded_extra) {
  const auto h = static_cast<N>(card.hidden_size);
  const auto vocab = static_cast<N>(card.vocab_size);
  Params<N> text;
  text.sharded += vocab * h;                                 // embedding
  if (!card.tie_word_embeddings) text.sharded += vocab * h;  // lm_head
  text.replicated += h;                                      // final norm
  for (int i = 0; i < card.NumLayers(); ++i) {
    const auto index = static_cast<std::size_t>(i);
    const std::string layer = "model.layers." + std::to_string(i) + ".";
    text.replicated += 2 * h;  // input and post-attention norms
    if (card.layers[index] == LayerType::kLinearAttention) {
      text += LinearAttentionParams<N>(card, quant, layer);
    } else {
      const Params<N> attention = AttentionParams<N>(card, tp, quant, layer);
      text += attention;
      unsharded_extra += AttentionParamsUnsharded<N>(card) - attention.Total();
    }
    text += MlpParams<N>(card, card.moe_layers[index], quant, layer);
  }
  return text;
}

}  // namespace

WeightCount CountWeights(const ModelCard& card, int tp) {
  return CountWeights(card, tp, card.quantization.value_or(Quantization{}));
}

WeightCount CountWeights(const ModelCard& card, int tp, const Quantization& quant, bool with_mtp) {
  int64_t text_unsharded_extra = 0;
  const Params<int64_t> text = TextParams<int64_t>(card, tp, quant, text_unsharded_extra);

  WeightCount count;
  count.text_params = text.Total() + text_unsharded_extra;
  count.text_params_per_rank = text.PerRank(tp);
  count.quantized_params_per_rank = text.QuantizedPerRank(tp);
  if (card.vision) {
    const Params<int64_t> vision = VisionParams<int64_t>(*card.vision, quant);
    count.vision_params = vision.Total();
    count.vision_params_per_rank = vision.PerRank(tp);
    count.quantized_params_per_rank += vision.QuantizedPerRank(tp);
  }
  int64_t mtp_quantized_per_rank = 0;
  if (with_mtp && card.mtp_layers > 0) {
    int64_t mtp_unsharded_extra = 0;
    const Params<int64_t> mtp = MtpParams<int64_t>(card, tp, quant, mtp_unsharded_extra);
    count.mtp_params = mtp.Total() + mtp_unsharded_extra;
    count.mtp_params_per_rank = mtp.PerRank(tp);
    mtp_quantized_per_rank = mtp.QuantizedPerRank(tp);
    count.quantized_params_per_rank += mtp_quantized_per_rank;
  }
  const auto bytes = [&](int64_t params, int64_t quantized) {
    return (params - quantized) * BytesOf(card.dtype) +
           static_cast<int64_t>(std::ceil(static_cast<double>(quantized) * quant.BytesPerWeight()));
  };
  count.bytes_per_rank =
      bytes(count.text_params_per_rank + count.vision_params_per_rank + count.mtp_params_per_rank,
            count.quantized_params_per_rank);
  count.mtp_bytes_per_rank = bytes(count.mtp_params_per_rank, mtp_quantized_per_rank);
  return count;
}

std::optional<std::string> QuantizedLayoutViolation(const ModelCard& card, int tp,
                                                    const Quantization& quant) {
  if (quant.weight_bits != 4) return std::nullopt;
  // Representative checkpoint names: the exclusions are per module kind in every published
  // config fleetsim reads, so layer 0 stands for all.
  const auto quantized = [&](const std::string& module) {
    return quant.Quantizes("model.layers.0." + module);
  };
  if (card.linear && quantized("linear_attn.in_proj_ba")) {
    return "a 4-bit " + std::string(NameOf(quant.method)) +
           " layout of the GDN gate projection linear_attn.in_proj_ba (" +
           std::to_string(2 * card.linear->num_v_heads) +
           " outputs) is unverified: vLLM's loaders do not check its packing; leave it "
           "unquantized (modules_to_not_convert)";
  }
  const AttentionShape& a = card.attention;
  struct Shape {
    const char* module;
    int64_t width;  // the split dimension, whole model
    bool row;       // row-parallel: inputs split; else outputs split
  };
  std::vector<Shape> shapes = {
      {"self_attn.o_proj", int64_t{a.num_q_heads} * a.v_head_dim, true},
      {"self_attn.qkv_proj",
       int64_t{a.num_q_heads} * a.head_dim * (a.output_gate ? 2 : 1) +
           int64_t{std::max(1, a.num_kv_heads / tp)} * tp * (a.head_dim + a.v_head_dim),
       false}};
  if (card.intermediate_size > 0) {
    shapes.push_back({"mlp.down_proj", card.intermediate_size, true});
    shapes.push_back({"mlp.gate_up_proj", card.intermediate_size, false});
  }
  if (card.moe) shapes.push_back({"mlp.experts", card.moe->expert_intermediate, true});
  if (card.linear) {
    const LinearAttentionShape& g = *card.linear;
    shapes.push_back({"linear_attn.out_proj", int64_t{g.num_v_heads} * g.v_head_dim, true});
    shapes.push_back(
        {"linear_attn.in_proj_qkvz",
         2 * int64_t{g.num_k_heads} * g.k_head_dim + 2 * int64_t{g.num_v_heads} * g.v_head_dim,
         false});
  }
  for (const Shape& shape : shapes) {
    if (!quantized(shape.module) || shape.width % tp != 0) continue;
    const int64_t per_rank = shape.width / tp;
    if (shape.row && quant.group_size > 0 && per_rank % quant.group_size != 0) {
      return std::string(shape.module) + " has " + std::to_string(per_rank) +
             " inputs per rank at TP " + std::to_string(tp) + ", not whole groups of " +
             std::to_string(quant.group_size) +
             " (vLLM: the input size is not aligned with "
             "the quantized weight shape)";
    }
    if (!shape.row && quant.method == QuantMethod::kAwq && per_rank % 8 != 0) {
      return std::string(shape.module) + " has " + std::to_string(per_rank) +
             " outputs per rank at TP " + std::to_string(tp) +
             ", not whole int32 words of eight 4-bit weights (vLLM: the output size is not "
             "aligned with the quantized weight shape)";
    }
  }
  return std::nullopt;
}

bool WeightCountOverflows(const ModelCard& card) {
  // At TP 1, unquantized, MTP included: the most parameters any count makes, then bytes
  // at 4 a parameter (float32, the widest dtype).
  const Quantization none;
  try {
    CheckedInt extra = 0;
    CheckedInt params = TextParams<CheckedInt>(card, 1, none, extra).Total() + extra;
    if (card.vision) params += VisionParams<CheckedInt>(*card.vision, none).Total();
    if (card.mtp_layers > 0) params += MtpParams<CheckedInt>(card, 1, none, extra).Total() + extra;
    (void)(params * 4);
  } catch (const CheckedInt::Overflow&) {
    return true;
  }
  return false;
}

}  // namespace fleetsim
