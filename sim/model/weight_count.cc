#include "model/weight_count.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace fleetsim {
namespace {

// A parameter tensor either split across TP ranks or replicated on each; `quantized` is
// the part of `sharded` stored in the quantized format (linear projections the
// quantization covers; all of them are TP-sharded).
struct Params {
  int64_t sharded = 0;
  int64_t replicated = 0;
  int64_t quantized = 0;

  Params& operator+=(const Params& other) {
    sharded += other.sharded;
    replicated += other.replicated;
    quantized += other.quantized;
    return *this;
  }
  int64_t Total() const { return sharded + replicated; }
  int64_t PerRank(int tp) const { return sharded / tp + replicated; }
  int64_t QuantizedPerRank(int tp) const { return quantized / tp; }
};

// A linear projection's weights (sharded): quantized when the quantization covers the
// module of that checkpoint name.
void AddLinear(Params& p, int64_t params, const Quantization& quant, const std::string& module) {
  p.sharded += params;
  if (quant.Quantizes(module)) p.quantized += params;
}

Params AttentionParams(const ModelCard& card, int tp, const Quantization& quant,
                       const std::string& layer) {
  const AttentionShape& a = card.attention;
  const int64_t h = card.hidden_size;
  const int64_t q_width = int64_t{a.num_q_heads} * a.head_dim * (a.output_gate ? 2 : 1);
  // K and V: whole KV heads per rank, replicated when tp > kv_heads. Counting them as
  // sharded with kv_heads_per_rank * tp heads gives exact per-rank bytes.
  const int64_t kv_heads_stored = int64_t{std::max(1, a.num_kv_heads / tp)} * tp;
  const int64_t kv_width = kv_heads_stored * (a.head_dim + a.v_head_dim);
  Params p;
  AddLinear(p, h * q_width + h * kv_width, quant, layer + "self_attn.qkv_proj");
  AddLinear(p, int64_t{a.num_q_heads} * a.v_head_dim * h, quant, layer + "self_attn.o_proj");
  if (a.bias) p.sharded += q_width + kv_width;
  if (a.qk_norm) p.replicated += 2 * int64_t{a.head_dim};
  return p;
}

// Unsharded count for reporting: K/V once, not once per replica.
int64_t AttentionParamsUnsharded(const ModelCard& card) {
  const AttentionShape& a = card.attention;
  const int64_t h = card.hidden_size;
  const int64_t q_width = int64_t{a.num_q_heads} * a.head_dim * (a.output_gate ? 2 : 1);
  const int64_t kv_width = int64_t{a.num_kv_heads} * (a.head_dim + a.v_head_dim);
  int64_t total = h * q_width + h * kv_width + int64_t{a.num_q_heads} * a.v_head_dim * h;
  if (a.bias) total += q_width + kv_width;
  if (a.qk_norm) total += 2 * int64_t{a.head_dim};
  return total;
}

Params LinearAttentionParams(const ModelCard& card, const Quantization& quant,
                             const std::string& layer) {
  const LinearAttentionShape& g = *card.linear;
  const int64_t h = card.hidden_size;
  const int64_t key_width = int64_t{g.num_k_heads} * g.k_head_dim;
  const int64_t value_width = int64_t{g.num_v_heads} * g.v_head_dim;
  Params p;
  AddLinear(p, h * (2 * key_width + 2 * value_width), quant, layer + "linear_attn.in_proj_qkvz");
  AddLinear(p, h * 2 * g.num_v_heads, quant, layer + "linear_attn.in_proj_ba");
  p.sharded += g.ConvDim() * g.conv_kernel    // conv1d
               + 2 * int64_t{g.num_v_heads};  // dt_bias, A_log
  AddLinear(p, value_width * h, quant, layer + "linear_attn.out_proj");
  p.replicated = g.v_head_dim;  // gated RMSNorm weight
  return p;
}

Params MlpParams(const ModelCard& card, bool moe_layer, const Quantization& quant,
                 const std::string& layer) {
  const int64_t h = card.hidden_size;
  Params p;
  if (!moe_layer) {
    AddLinear(p, 2 * h * card.intermediate_size, quant, layer + "mlp.gate_up_proj");
    AddLinear(p, h * card.intermediate_size, quant, layer + "mlp.down_proj");
    return p;
  }
  const MoeShape& m = *card.moe;
  AddLinear(p, int64_t{m.num_experts} * 3 * h * m.expert_intermediate, quant,
            layer + "mlp.experts");
  AddLinear(p, 3 * h * m.shared_expert_intermediate, quant, layer + "mlp.shared_expert");
  p.replicated = h * m.num_experts;  // router
  if (m.shared_expert_intermediate > 0 && m.num_shared_experts == 0) {
    p.replicated += h;  // Qwen's sigmoid gate on the shared expert
  }
  return p;
}

Params VisionParams(const VisionTower& v, const Quantization& quant) {
  const int64_t h = v.hidden_size;
  const int64_t merged = h * v.spatial_merge_size * v.spatial_merge_size;
  Params p;
  p.sharded += int64_t{v.in_channels} * v.temporal_patch_size * v.patch_size * v.patch_size * h;
  p.replicated += h + v.num_position_embeddings * h;  // patch bias, position table
  // The blocks' four projections are linear layers (quantized unless excluded); their
  // biases are not.
  const int64_t weights = h * 3 * h + h * h + 2 * h * v.intermediate_size;
  const int64_t biases = 3 * h + h + v.intermediate_size + h;
  AddLinear(p, v.depth * weights, quant, "visual.blocks.0.attn.qkv");
  p.sharded += v.depth * biases;
  p.replicated += int64_t{v.depth} * 4 * h;  // two LayerNorms, weight and bias
  const int64_t merger =
      (merged * merged + merged) + (merged * v.out_hidden_size + v.out_hidden_size);
  p.sharded += (1 + v.num_deepstack_mergers) * merger;
  p.replicated += 2 * h + int64_t{v.num_deepstack_mergers} * 2 * merged;
  return p;
}

// Qwen3.5's MTP module (qwen3_5_mtp.py, Qwen3_5MultiTokenPredictor): fc (2H -> H,
// ColumnParallelLinear with gather_output: split by TP), pre_fc_norm_hidden,
// pre_fc_norm_embedding and the final norm, and mtp_layers full-attention decoder layers
// (Qwen3_5DecoderLayer, layer_type "full_attention") with their two norms and the model's
// MLP kind. embed_tokens and lm_head are shared with the target (not counted).
Params MtpParams(const ModelCard& card, int tp, const Quantization& quant,
                 int64_t& unsharded_extra) {
  const int64_t h = card.hidden_size;
  Params p;
  AddLinear(p, 2 * h * h, quant, "mtp.fc");
  p.replicated += 3 * h;
  const bool moe = card.CountMoeLayers() > 0;
  for (int i = 0; i < card.mtp_layers; ++i) {
    const std::string layer = "mtp.layers." + std::to_string(i) + ".";
    p.replicated += 2 * h;  // input and post-attention norms
    const Params attention = AttentionParams(card, tp, quant, layer);
    p += attention;
    unsharded_extra += AttentionParamsUnsharded(card) - attention.Total();
    p += MlpParams(card, moe, quant, layer);
  }
  return p;
}

}  // namespace

WeightCount CountWeights(const ModelCard& card, int tp) {
  return CountWeights(card, tp, card.quantization.value_or(Quantization{}));
}

WeightCount CountWeights(const ModelCard& card, int tp, const Quantization& quant, bool with_mtp) {
  const int64_t h = card.hidden_size;
  Params text;
  int64_t text_unsharded_extra = 0;
  text.sharded += card.vocab_size * h;                                 // embedding
  if (!card.tie_word_embeddings) text.sharded += card.vocab_size * h;  // lm_head
  text.replicated += h;                                                // final norm
  for (int i = 0; i < card.NumLayers(); ++i) {
    const auto index = static_cast<std::size_t>(i);
    const std::string layer = "model.layers." + std::to_string(i) + ".";
    text.replicated += 2 * h;  // input and post-attention norms
    if (card.layers[index] == LayerType::kLinearAttention) {
      text += LinearAttentionParams(card, quant, layer);
    } else {
      const Params attention = AttentionParams(card, tp, quant, layer);
      text += attention;
      text_unsharded_extra += AttentionParamsUnsharded(card) - attention.Total();
    }
    text += MlpParams(card, card.moe_layers[index], quant, layer);
  }

  WeightCount count;
  count.text_params = text.Total() + text_unsharded_extra;
  count.text_params_per_rank = text.PerRank(tp);
  count.quantized_params_per_rank = text.QuantizedPerRank(tp);
  if (card.vision) {
    const Params vision = VisionParams(*card.vision, quant);
    count.vision_params = vision.Total();
    count.vision_params_per_rank = vision.PerRank(tp);
    count.quantized_params_per_rank += vision.QuantizedPerRank(tp);
  }
  int64_t mtp_quantized_per_rank = 0;
  if (with_mtp && card.mtp_layers > 0) {
    int64_t mtp_unsharded_extra = 0;
    const Params mtp = MtpParams(card, tp, quant, mtp_unsharded_extra);
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

}  // namespace fleetsim
