#include "model/weight_count.h"

#include <algorithm>

namespace fleetsim {
namespace {

// A parameter tensor either split across TP ranks or replicated on each.
struct Params {
  int64_t sharded = 0;
  int64_t replicated = 0;

  Params& operator+=(const Params& other) {
    sharded += other.sharded;
    replicated += other.replicated;
    return *this;
  }
  int64_t Total() const { return sharded + replicated; }
  int64_t PerRank(int tp) const { return sharded / tp + replicated; }
};

Params AttentionParams(const ModelCard& card, int tp) {
  const AttentionShape& a = card.attention;
  const int64_t h = card.hidden_size;
  const int64_t q_width = int64_t{a.num_q_heads} * a.head_dim * (a.output_gate ? 2 : 1);
  // K and V: whole KV heads per rank, replicated when tp > kv_heads. Counting them as
  // sharded with kv_heads_per_rank * tp heads gives exact per-rank bytes.
  const int64_t kv_heads_stored = int64_t{std::max(1, a.num_kv_heads / tp)} * tp;
  const int64_t kv_width = kv_heads_stored * (a.head_dim + a.v_head_dim);
  Params p;
  p.sharded = h * q_width + h * kv_width + int64_t{a.num_q_heads} * a.v_head_dim * h;
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

Params LinearAttentionParams(const ModelCard& card) {
  const LinearAttentionShape& g = *card.linear;
  const int64_t h = card.hidden_size;
  const int64_t key_width = int64_t{g.num_k_heads} * g.k_head_dim;
  const int64_t value_width = int64_t{g.num_v_heads} * g.v_head_dim;
  Params p;
  p.sharded = h * (2 * key_width + 2 * value_width)  // in_proj_qkvz
              + h * 2 * g.num_v_heads                // in_proj_ba
              + g.ConvDim() * g.conv_kernel          // conv1d
              + 2 * int64_t{g.num_v_heads}           // dt_bias, A_log
              + value_width * h;                     // out_proj
  p.replicated = g.v_head_dim;                       // gated RMSNorm weight
  return p;
}

Params MlpParams(const ModelCard& card, bool moe_layer) {
  const int64_t h = card.hidden_size;
  Params p;
  if (!moe_layer) {
    p.sharded = 3 * h * card.intermediate_size;  // gate, up, down
    return p;
  }
  const MoeShape& m = *card.moe;
  p.sharded =
      int64_t{m.num_experts} * 3 * h * m.expert_intermediate + 3 * h * m.shared_expert_intermediate;
  p.replicated = h * m.num_experts;  // router
  if (m.shared_expert_intermediate > 0 && m.num_shared_experts == 0) {
    p.replicated += h;  // Qwen's sigmoid gate on the shared expert
  }
  return p;
}

Params VisionParams(const VisionTower& v) {
  const int64_t h = v.hidden_size;
  const int64_t merged = h * v.spatial_merge_size * v.spatial_merge_size;
  Params p;
  p.sharded += int64_t{v.in_channels} * v.temporal_patch_size * v.patch_size * v.patch_size * h;
  p.replicated += h + v.num_position_embeddings * h;  // patch bias, position table
  const int64_t block = (h * 3 * h + 3 * h)           // qkv
                        + (h * h + h)                 // proj
                        + (h * v.intermediate_size + v.intermediate_size)  // fc1
                        + (v.intermediate_size * h + h);                   // fc2
  p.sharded += v.depth * block;
  p.replicated += int64_t{v.depth} * 4 * h;  // two LayerNorms, weight and bias
  const int64_t merger =
      (merged * merged + merged) + (merged * v.out_hidden_size + v.out_hidden_size);
  p.sharded += (1 + v.num_deepstack_mergers) * merger;
  p.replicated += 2 * h + int64_t{v.num_deepstack_mergers} * 2 * merged;
  return p;
}

}  // namespace

WeightCount CountWeights(const ModelCard& card, int tp) {
  const int64_t h = card.hidden_size;
  Params text;
  int64_t text_unsharded_extra = 0;
  text.sharded += card.vocab_size * h;                                 // embedding
  if (!card.tie_word_embeddings) text.sharded += card.vocab_size * h;  // lm_head
  text.replicated += h;                                                // final norm
  for (int i = 0; i < card.NumLayers(); ++i) {
    const auto index = static_cast<std::size_t>(i);
    text.replicated += 2 * h;  // input and post-attention norms
    if (card.layers[index] == LayerType::kLinearAttention) {
      text += LinearAttentionParams(card);
    } else {
      const Params attention = AttentionParams(card, tp);
      text += attention;
      text_unsharded_extra += AttentionParamsUnsharded(card) - attention.Total();
    }
    text += MlpParams(card, card.moe_layers[index]);
  }

  WeightCount count;
  count.text_params = text.Total() + text_unsharded_extra;
  count.text_params_per_rank = text.PerRank(tp);
  if (card.vision) {
    const Params vision = VisionParams(*card.vision);
    count.vision_params = vision.Total();
    count.vision_params_per_rank = vision.PerRank(tp);
  }
  count.bytes_per_rank =
      (count.text_params_per_rank + count.vision_params_per_rank) * BytesOf(card.dtype);
  return count;
}

}  // namespace fleetsim
