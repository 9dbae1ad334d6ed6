#include "model/model_card.h"

#include <algorithm>
#include <set>

#include "core/yaml_section.h"
#include "model/weight_count.h"

namespace fleetsim {
namespace {

LayerType ParseLayerType(const YamlSection& text, const std::string& name, std::size_t index) {
  if (name == "full_attention" || name == "attention") return LayerType::kFullAttention;
  if (name == "linear_attention") return LayerType::kLinearAttention;
  if (name == "sliding_attention") return LayerType::kSlidingAttention;
  throw InputError(text.file(), text.LineOf("layer_types"),
                   text.FieldPath("layer_types") + "[" + std::to_string(index) + "]",
                   "unknown layer type '" + name +
                       "' (accepted: full_attention, linear_attention, sliding_attention)");
}

std::vector<LayerType> ReadLayerTypes(const YamlSection& text, int num_layers) {
  std::vector<LayerType> layers;
  if (text.Has("layer_types")) {
    const auto names = text.GetList<std::string>("layer_types");
    if (static_cast<int>(names.size()) != num_layers) {
      text.Fail("layer_types", "has " + std::to_string(names.size()) +
                                   " entries but num_hidden_layers is " +
                                   std::to_string(num_layers));
    }
    for (std::size_t i = 0; i < names.size(); ++i) {
      layers.push_back(ParseLayerType(text, names[i], i));
    }
    return layers;
  }
  if (auto interval = text.Find<int>("full_attention_interval")) {
    if (*interval <= 0) text.Fail("full_attention_interval", "must be positive");
    for (int i = 0; i < num_layers; ++i) {
      layers.push_back((i + 1) % *interval == 0 ? LayerType::kFullAttention
                                                : LayerType::kLinearAttention);
    }
    return layers;
  }
  return std::vector<LayerType>(static_cast<std::size_t>(num_layers), LayerType::kFullAttention);
}

int Positive(const YamlSection& section, std::string_view key) {
  const int value = section.Get<int>(key);
  if (value <= 0) section.Fail(key, "must be positive, got " + std::to_string(value));
  return value;
}

// Far past any published model (Llama 3.1 405B has 126 layers), and small enough that the
// per-layer tables built from a card stay in the kilobytes: a card beyond it is a typo or
// a corrupted file, refused before anything is sized by it.
constexpr int kMaxLayers = 4096;

int LayerCount(const YamlSection& section, std::string_view key, int value) {
  if (value > kMaxLayers) {
    section.Fail(key, std::to_string(value) + " layers is past any real model's (at most " +
                          std::to_string(kMaxLayers) + ")");
  }
  return value;
}

int64_t Positive64(const YamlSection& section, std::string_view key) {
  const int64_t value = section.Get<int64_t>(key);
  if (value <= 0) section.Fail(key, "must be positive, got " + std::to_string(value));
  return value;
}

bool IsQwen3Family(const std::string& model_type) {
  return model_type.rfind("qwen3", 0) == 0;  // qwen3, qwen3_moe, qwen3_next, qwen3_5_text ...
}

AttentionShape ReadAttention(const YamlSection& text, int64_t hidden, const std::string& type) {
  AttentionShape shape;
  shape.num_q_heads = Positive(text, "num_attention_heads");
  shape.num_kv_heads = text.GetOr<int>("num_key_value_heads", shape.num_q_heads);
  if (shape.num_kv_heads <= 0) text.Fail("num_key_value_heads", "must be positive");
  if (hidden % shape.num_q_heads != 0 && !text.Has("head_dim")) {
    text.Fail("head_dim", "missing, and hidden_size is not a multiple of num_attention_heads");
  }
  shape.head_dim = text.GetOr<int>("head_dim", static_cast<int>(hidden / shape.num_q_heads));
  shape.v_head_dim = text.GetOr<int>("v_head_dim", shape.head_dim);
  shape.output_gate = text.GetOr<bool>("attn_output_gate", false);
  shape.qk_norm = IsQwen3Family(type);
  shape.bias = text.GetOr<bool>("attention_bias", false);
  shape.sliding_window = text.GetOr<int>("sliding_window", 0);
  shape.kv_lora_rank = text.GetOr<int>("kv_lora_rank", 0);
  return shape;
}

std::optional<LinearAttentionShape> ReadLinearAttention(const YamlSection& text) {
  if (!text.Has("linear_num_value_heads")) return std::nullopt;
  LinearAttentionShape shape;
  shape.num_k_heads = Positive(text, "linear_num_key_heads");
  shape.num_v_heads = Positive(text, "linear_num_value_heads");
  shape.k_head_dim = Positive(text, "linear_key_head_dim");
  shape.v_head_dim = Positive(text, "linear_value_head_dim");
  shape.conv_kernel = Positive(text, "linear_conv_kernel_dim");
  return shape;
}

std::optional<MoeShape> ReadMoe(const YamlSection& text) {
  // Qwen: num_experts; DeepSeek: n_routed_experts; Mixtral / gpt-oss: num_local_experts.
  std::optional<int> experts = text.Find<int>("num_experts");
  if (!experts) experts = text.Find<int>("n_routed_experts");
  if (!experts) experts = text.Find<int>("num_local_experts");
  if (!experts || *experts <= 0) return std::nullopt;
  MoeShape shape;
  shape.num_experts = *experts;
  shape.experts_per_token = Positive(text, "num_experts_per_tok");
  shape.expert_intermediate = text.Has("moe_intermediate_size")
                                  ? Positive64(text, "moe_intermediate_size")
                                  : Positive64(text, "intermediate_size");
  shape.shared_expert_intermediate = text.GetOr<int64_t>("shared_expert_intermediate_size", 0);
  shape.num_shared_experts = text.GetOr<int>("n_shared_experts", 0);
  if (shape.num_shared_experts > 0 && shape.shared_expert_intermediate == 0) {
    shape.shared_expert_intermediate = shape.num_shared_experts * shape.expert_intermediate;
  }
  return shape;
}

std::vector<bool> ReadMoeLayers(const YamlSection& text, int num_layers, bool has_moe) {
  std::vector<bool> moe(static_cast<std::size_t>(num_layers), has_moe);
  if (!has_moe) return moe;
  const auto mlp_only = text.GetList<int>("mlp_only_layers");
  const std::set<int> dense_layers(mlp_only.begin(), mlp_only.end());
  const int sparse_step = text.GetOr<int>("decoder_sparse_step", 1);
  const int first_dense = text.GetOr<int>("first_k_dense_replace", 0);
  const int moe_freq = text.GetOr<int>("moe_layer_freq", 1);
  if (sparse_step <= 0) text.Fail("decoder_sparse_step", "must be positive");
  if (moe_freq <= 0) text.Fail("moe_layer_freq", "must be positive");
  for (int i = 0; i < num_layers; ++i) {
    moe[static_cast<std::size_t>(i)] = !dense_layers.contains(i) && (i + 1) % sparse_step == 0 &&
                                       i >= first_dense && (i - first_dense) % moe_freq == 0;
  }
  return moe;
}

std::optional<VisionTower> ReadVision(const YamlSection& root) {
  std::optional<YamlSection> v = root.FindChild("vision_config");
  if (!v || !v->Has("depth")) return std::nullopt;
  VisionTower tower;
  tower.depth = Positive(*v, "depth");
  tower.hidden_size = Positive64(*v, "hidden_size");
  tower.intermediate_size = Positive64(*v, "intermediate_size");
  tower.out_hidden_size = v->GetOr<int64_t>("out_hidden_size", tower.hidden_size);
  tower.in_channels = v->GetOr<int>("in_channels", 3);
  tower.patch_size = Positive(*v, "patch_size");
  tower.temporal_patch_size = v->GetOr<int>("temporal_patch_size", 1);
  tower.spatial_merge_size = v->GetOr<int>("spatial_merge_size", 1);
  tower.num_position_embeddings = v->GetOr<int64_t>("num_position_embeddings", 0);
  tower.num_deepstack_mergers =
      static_cast<int>(v->GetList<int>("deepstack_visual_indexes").size());
  return tower;
}

Dtype ReadDtype(const YamlSection& section, std::string_view key, Dtype fallback) {
  std::optional<std::string> name = section.Find<std::string>(key);
  if (!name) return fallback;
  std::optional<Dtype> dtype = ParseDtype(*name);
  if (!dtype) {
    section.Fail(key, "unknown dtype '" + *name + "' (accepted: bfloat16, float16, float32, fp8)");
  }
  return *dtype;
}

}  // namespace

std::string_view NameOf(LayerType type) {
  switch (type) {
    case LayerType::kFullAttention:
      return "full_attention";
    case LayerType::kLinearAttention:
      return "linear_attention";
    case LayerType::kSlidingAttention:
      return "sliding_attention";
  }
  return "?";
}

int64_t LinearAttentionShape::ConvDim() const {
  return 2LL * k_head_dim * num_k_heads + static_cast<int64_t>(v_head_dim) * num_v_heads;
}

int ModelCard::CountLayers(LayerType type) const {
  return static_cast<int>(std::count(layers.begin(), layers.end(), type));
}

int ModelCard::CountMoeLayers() const {
  return static_cast<int>(std::count(moe_layers.begin(), moe_layers.end(), true));
}

std::vector<LayerType> ModelCard::DistinctLayerTypes() const {
  std::vector<LayerType> types;
  for (LayerType type : layers) {
    if (std::find(types.begin(), types.end(), type) == types.end()) types.push_back(type);
  }
  return types;
}

int ModelCard::ProfilingDepth() const {
  const std::size_t distinct = DistinctLayerTypes().size();
  std::vector<LayerType> seen;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    if (std::find(seen.begin(), seen.end(), layers[i]) == seen.end()) seen.push_back(layers[i]);
    if (seen.size() == distinct) return static_cast<int>(i + 1);
  }
  return NumLayers();
}

bool ModelCard::SsmDtypeFollowsConfig() const {
  return architecture == "Qwen3_5ForConditionalGeneration" ||
         architecture == "Qwen3_5MoeForConditionalGeneration";
}

ModelCard LoadModelCard(const std::string& config_path, std::string name) {
  const YamlSection root = LoadYamlFile(config_path);
  if (!root.node().IsMap()) {
    throw InputError(config_path, 1, "", "expected a JSON object (a Hugging Face config.json)");
  }
  // Multimodal checkpoints keep the language model's fields under text_config.
  const YamlSection text = root.FindChild("text_config").value_or(root);

  ModelCard card;
  card.name = std::move(name);
  card.config_path = config_path;
  const auto architectures = root.GetList<std::string>("architectures");
  card.architecture = architectures.empty() ? "" : architectures.front();
  card.model_type =
      text.GetOr<std::string>("model_type", root.GetOr<std::string>("model_type", ""));

  // Newer configs say `dtype`, older ones `torch_dtype`; either may sit at the top level.
  Dtype dtype = Dtype::kBfloat16;
  for (const YamlSection* section : {&root, &text}) {
    dtype = ReadDtype(*section, "torch_dtype", dtype);
    dtype = ReadDtype(*section, "dtype", dtype);
  }
  card.dtype = dtype;
  if (text.Has("mamba_ssm_dtype")) {
    card.config_ssm_dtype = ReadDtype(text, "mamba_ssm_dtype", Dtype::kFloat32);
  }

  card.hidden_size = Positive64(text, "hidden_size");
  card.intermediate_size = text.GetOr<int64_t>("intermediate_size", 0);
  card.vocab_size = Positive64(text, "vocab_size");
  card.max_position_embeddings = Positive64(text, "max_position_embeddings");
  card.tie_word_embeddings =
      text.GetOr<bool>("tie_word_embeddings", root.GetOr<bool>("tie_word_embeddings", false));

  const int num_layers = LayerCount(text, "num_hidden_layers", Positive(text, "num_hidden_layers"));
  card.layers = ReadLayerTypes(text, num_layers);
  card.attention = ReadAttention(text, card.hidden_size, card.model_type);
  card.linear = ReadLinearAttention(text);
  if (card.IsHybrid() && !card.linear) {
    text.Fail("linear_num_value_heads",
              "the model has linear_attention layers but no linear_* head fields");
  }
  card.moe = ReadMoe(text);
  card.moe_layers = ReadMoeLayers(text, num_layers, card.moe.has_value());
  if (card.intermediate_size <= 0 && card.CountMoeLayers() < num_layers) {
    text.Fail("intermediate_size", "missing, and some layers have a dense MLP");
  }
  card.vision = ReadVision(root);
  card.quantization = ReadQuantizationConfig(root);
  card.mtp_layers =
      text.GetOr<int>("mtp_num_hidden_layers", text.GetOr<int>("num_nextn_predict_layers", 0));
  if (card.mtp_layers < 0) text.Fail("mtp_num_hidden_layers", "must not be negative");
  LayerCount(text, "mtp_num_hidden_layers", card.mtp_layers);
  if (WeightCountOverflows(card)) {
    throw InputError(config_path, 1, "",
                     "its weights cannot be counted in 64 bits (hidden_size " +
                         std::to_string(card.hidden_size) + ", intermediate_size " +
                         std::to_string(card.intermediate_size) + ", vocab_size " +
                         std::to_string(card.vocab_size) + ", num_hidden_layers " +
                         std::to_string(num_layers) +
                         "): a size is far past any real model's, or negative");
  }
  return card;
}

}  // namespace fleetsim
