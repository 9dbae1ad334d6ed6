// A model as fleetsim sees it, read from a Hugging Face config.json as published.
//
// Handles multimodal configs whose language model sits under `text_config`, layer order
// from `layer_types` or only `full_attention_interval` (layer i is full attention iff
// (i+1) % n == 0), the gated-DeltaNet `linear_*` fields, and the MoE field spellings of the
// Qwen, Mixtral/gpt-oss and DeepSeek families. See ENGINE_SEMANTICS.md section 1.
//
//   ModelCard card = LoadModelCard("models/qwen3.8-27b/config.json", "qwen3.8-27b");
//   card.CountLayers(LayerType::kLinearAttention);  // 48
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/dtype.h"
#include "model/quantization.h"

namespace fleetsim {

enum class LayerType { kFullAttention, kLinearAttention, kSlidingAttention };

// The Hugging Face spelling used in `layer_types`.
std::string_view NameOf(LayerType type);

struct AttentionShape {
  int num_q_heads = 0;
  int num_kv_heads = 0;
  int head_dim = 0;
  int v_head_dim = 0;
  bool output_gate = false;  // attn_output_gate: the Q projection is twice as wide
  bool qk_norm = false;      // per-head RMSNorm on q and k (Qwen3 family)
  bool bias = false;         // attention_bias on q/k/v
  int sliding_window = 0;    // tokens, for sliding_attention layers
  int kv_lora_rank = 0;      // > 0: multi-head latent attention (DeepSeek)
};

// Gated DeltaNet ("linear_attention") mixer shape.
struct LinearAttentionShape {
  int num_k_heads = 0;
  int num_v_heads = 0;
  int k_head_dim = 0;
  int v_head_dim = 0;
  int conv_kernel = 0;
  // Channels of the short convolution: q and k (Hk x Dk each) plus v (Hv x Dv).
  int64_t ConvDim() const;
};

struct MoeShape {
  int num_experts = 0;
  int experts_per_token = 0;
  int64_t expert_intermediate = 0;
  int64_t shared_expert_intermediate = 0;  // 0 when the model has no shared expert
  int num_shared_experts = 0;
};

// The vision encoder of a multimodal checkpoint; it is loaded and holds GPU memory even
// when serving text only.
struct VisionTower {
  int depth = 0;
  int64_t hidden_size = 0;
  int64_t intermediate_size = 0;
  int64_t out_hidden_size = 0;
  int in_channels = 0;
  int patch_size = 0;
  int temporal_patch_size = 0;
  int spatial_merge_size = 0;
  int64_t num_position_embeddings = 0;
  int num_deepstack_mergers = 0;
};

struct ModelCard {
  std::string name;
  std::string config_path;
  std::string architecture;
  std::string model_type;
  Dtype dtype = Dtype::kBfloat16;
  // The HF `mamba_ssm_dtype` field; only Qwen3.5-family configs let it decide.
  std::optional<Dtype> config_ssm_dtype;

  int64_t hidden_size = 0;
  int64_t intermediate_size = 0;
  int64_t vocab_size = 0;
  int64_t max_position_embeddings = 0;
  bool tie_word_embeddings = false;

  std::vector<LayerType> layers;
  std::vector<bool> moe_layers;  // per layer: MoE MLP instead of a dense one

  AttentionShape attention;
  std::optional<LinearAttentionShape> linear;
  std::optional<MoeShape> moe;
  std::optional<VisionTower> vision;
  // The checkpoint's quantization_config, when it has one.
  std::optional<Quantization> quantization;
  // Multi-token-prediction layers the checkpoint ships (Qwen3.5 configs:
  // `mtp_num_hidden_layers`; DeepSeek-style: `num_nextn_predict_layers`); 0 without. vLLM's
  // `mtp` speculative method drafts with them (speculative decoding, engine/speculative.h).
  int mtp_layers = 0;

  int NumLayers() const { return static_cast<int>(layers.size()); }
  int CountLayers(LayerType type) const;
  bool IsHybrid() const { return CountLayers(LayerType::kLinearAttention) > 0; }
  int CountMoeLayers() const;
  // The block types present, in order of first appearance.
  std::vector<LayerType> DistinctLayerTypes() const;
  // Layers a profiling run needs to reach every block type (ENGINE_SEMANTICS.md section 8):
  // the smallest prefix of the layer list that holds each distinct type.
  int ProfilingDepth() const;
  // Qwen3_5ForConditionalGeneration / Qwen3_5MoeForConditionalGeneration: their `auto`
  // ssm-state dtype follows the config's `mamba_ssm_dtype` (ENGINE_SEMANTICS.md section 1).
  bool SsmDtypeFollowsConfig() const;
};

// Reads a config.json; every problem is an InputError naming the file, line and field.
ModelCard LoadModelCard(const std::string& config_path, std::string name);

}  // namespace fleetsim
