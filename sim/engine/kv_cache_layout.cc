#include "engine/kv_cache_layout.h"

#include <algorithm>
#include <map>

namespace fleetsim {
namespace {

int64_t CeilDiv(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

// vLLM's uniform-page grouping: group_size is the smallest layer count among the types,
// or the largest when that is under 1.5x the smallest; each type is split into
// cdiv(n, group_size) groups taking every num_groups-th layer.
// `draft_layers` full-attention MTP layers follow the target's (vLLM registers the draft
// model's attention layers after the target's, so they come last in their type's list).
std::vector<KvCacheGroup> GroupLayers(const ModelCard& card, int draft_layers, int& group_size) {
  std::map<LayerType, std::vector<int>> by_type;
  for (int i = 0; i < card.NumLayers(); ++i) {
    by_type[card.layers[static_cast<std::size_t>(i)]].push_back(i);
  }
  for (int j = 0; j < draft_layers; ++j)
    by_type[LayerType::kFullAttention].push_back(card.NumLayers() + j);
  std::size_t smallest = SIZE_MAX, largest = 0;
  for (const auto& [type, layers] : by_type) {
    smallest = std::min(smallest, layers.size());
    largest = std::max(largest, layers.size());
  }
  group_size = static_cast<int>(2 * largest < 3 * smallest ? largest : smallest);

  std::vector<KvCacheGroup> groups;
  // Types in order of first appearance in the layer list, as vLLM builds its groups (the
  // 27B: three GDN groups, then attention). The order decides allocation and freeing order.
  std::vector<LayerType> types = card.DistinctLayerTypes();
  if (draft_layers > 0 &&
      std::find(types.begin(), types.end(), LayerType::kFullAttention) == types.end())
    types.push_back(LayerType::kFullAttention);
  for (LayerType type : types) {
    auto found = by_type.find(type);
    if (found == by_type.end()) continue;
    const std::vector<int>& layers = found->second;
    const std::size_t num_groups =
        static_cast<std::size_t>(CeilDiv(static_cast<int64_t>(layers.size()), group_size));
    for (std::size_t g = 0; g < num_groups; ++g) {
      KvCacheGroup group{type, {}};
      for (std::size_t i = g; i < layers.size(); i += num_groups)
        group.layers.push_back(layers[i]);
      groups.push_back(std::move(group));
    }
  }
  return groups;
}

}  // namespace

int KvCacheLayout::AttentionGroups() const {
  return static_cast<int>(std::count_if(groups.begin(), groups.end(), [](const KvCacheGroup& g) {
    return g.type == LayerType::kFullAttention;
  }));
}

int KvCacheLayout::GdnGroups() const {
  return static_cast<int>(groups.size()) - AttentionGroups();
}

int64_t KvCacheLayout::StateBlocksPerRequest(MambaCacheMode mode) const {
  // Pages per GDN layer: the state being written (+ speculative slots), plus in align mode
  // the last checkpoint at a block boundary (vLLM MambaSpec.max_memory_usage_bytes).
  const int64_t pages = (mode == MambaCacheMode::kAlign ? 2 : 1) + num_spec;
  return GdnGroups() * pages;
}

int64_t KvCacheLayout::BlocksPerRequest(int64_t tokens, MambaCacheMode mode) const {
  return AttentionGroups() * CeilDiv(tokens, block_size) + StateBlocksPerRequest(mode);
}

AttentionQuery AttentionQueryOf(const ModelCard& card, const ResolvedEngineConfig& engine) {
  AttentionQuery q;
  q.head_size = card.attention.head_dim;
  q.q_heads_per_rank = card.attention.num_q_heads / engine.tp;
  q.kv_heads_per_rank = KvHeadsPerRank(card, engine.tp);
  q.kv_cache_dtype = engine.requested.kv_cache_dtype;
  q.model_dtype = std::string(NameOf(card.dtype));
  q.sliding_window = card.attention.sliding_window;
  q.requested_block_size = engine.requested.block_size;
  q.max_model_len = engine.max_model_len;
  q.backend_pin = engine.requested.attention_backend;
  q.kernel_pin = engine.requested.decode_kernel;
  return q;
}

KvCacheLayout ResolveKvCacheLayout(const ModelCard& card, const ResolvedEngineConfig& engine,
                                   const SettingError& error, const HardwareSpec* hardware) {
  KvCacheLayout layout;
  // vLLM selects the attention backend before the hybrid block size is aligned: the
  // backend's smallest kernel block size is the alignment base.
  std::optional<BackendChoice> backend;
  const AttentionQuery query = AttentionQueryOf(card, engine);
  if (hardware) {
    backend = SelectAttentionBackend(hardware->attention, query, error);
    layout.alignment_base = backend->backend->AlignmentBase();
  } else if (engine.requested.attention_backend != "auto" ||
             engine.requested.decode_kernel != "auto") {
    throw error(
        engine.requested.attention_backend != "auto" ? "attention_backend" : "decode_kernel",
        "a pin needs the GPU it runs on (hardware) to be checked");
  }
  layout.tp = engine.tp;
  layout.num_spec = engine.num_spec;
  layout.max_model_len = engine.max_model_len;
  layout.mamba_mode = engine.mamba_mode;
  layout.kv_heads_per_rank = KvHeadsPerRank(card, engine.tp);
  layout.attn_bytes_per_token_per_layer =
      AttentionBytesPerTokenPerLayer(card, engine.tp, engine.kv_dtype);
  const int attention_layers = card.CountLayers(LayerType::kFullAttention);
  layout.kv_bytes_per_token_rank = layout.attn_bytes_per_token_per_layer * attention_layers;
  layout.kv_bytes_per_token_model =
      AttentionBytesPerTokenPerLayer(card, 1, engine.kv_dtype) * attention_layers;
  // vLLM's Qwen3.5 MTP layers are full-attention layers of the target's shape (qwen3_5_mtp.py:
  // Qwen3_5DecoderLayer with layer_type "full_attention"), loaded only when speculating.
  layout.draft_attention_layers = engine.speculative.enabled() ? card.mtp_layers : 0;
  layout.draft_kv_bytes_per_token_rank =
      layout.attn_bytes_per_token_per_layer * layout.draft_attention_layers;

  layout.block_size_given = engine.requested.block_size.has_value();
  layout.requested_block_size = engine.requested.block_size.value_or(kBackendPreferredBlockSize);
  if (layout.requested_block_size <= 0) throw error("block_size", "must be positive");
  layout.block_size = layout.requested_block_size;

  if (card.IsHybrid()) {
    layout.gdn =
        GdnState(*card.linear, engine.tp, engine.num_spec, engine.conv_dtype, engine.ssm_dtype);
    layout.mamba_page_bytes = layout.gdn->PageBytes();
    layout.state_bytes_per_sequence =
        layout.mamba_page_bytes * card.CountLayers(LayerType::kLinearAttention);
    // Raise the block size until one attention page covers one mamba page.
    const int64_t align = std::max(layout.alignment_base, layout.requested_block_size);
    const int64_t block =
        align * CeilDiv(layout.mamba_page_bytes, align * layout.attn_bytes_per_token_per_layer);
    layout.block_size = static_cast<int>(std::max<int64_t>(layout.requested_block_size, block));
    layout.mamba_page_padded_bytes = layout.block_size * layout.attn_bytes_per_token_per_layer;
  }
  layout.page_bytes = layout.block_size * layout.attn_bytes_per_token_per_layer;
  layout.mamba_block_tokens =
      layout.mamba_mode == MambaCacheMode::kAlign ? layout.block_size : engine.max_model_len;

  if (backend) {
    const DecodeChoice decode =
        SelectDecodeKernel(*backend->backend, query, layout.block_size, error);
    AttentionPlan plan;
    plan.backend = *backend->backend;
    plan.decode = *decode.kernel;
    plan.kernel_block_size = decode.kernel_block_size;
    plan.reported_processors = hardware->attention.reported_processors;
    plan.backend_pinned = backend->pinned;
    plan.decode_pinned = decode.pinned;
    plan.backend_why = backend->why;
    plan.decode_why = decode.why;
    layout.attention = std::make_shared<const AttentionPlan>(std::move(plan));
  }

  layout.groups = GroupLayers(card, layout.draft_attention_layers, layout.group_size);
  layout.pool_block_bytes = layout.page_bytes * layout.group_size;

  if (layout.mamba_mode == MambaCacheMode::kAlign) {
    if (layout.block_size > engine.max_num_batched_tokens) {
      throw error("max_num_batched_tokens",
                  std::to_string(engine.max_num_batched_tokens) +
                      " is below the resolved block size " + std::to_string(layout.block_size) +
                      "; align mode needs block_size <= max_num_batched_tokens");
    }
    if (engine.long_prefill_token_threshold > 0 &&
        engine.long_prefill_token_threshold < layout.block_size) {
      throw error("long_prefill_token_threshold",
                  std::to_string(engine.long_prefill_token_threshold) +
                      " is below the resolved block size " + std::to_string(layout.block_size) +
                      "; align mode needs it >= block_size (or 0 for off)");
    }
  }
  return layout;
}

PoolCapacity SizePool(const KvCacheLayout& layout, int64_t kv_cache_bytes) {
  PoolCapacity pool;
  pool.kv_cache_bytes = kv_cache_bytes;
  pool.num_blocks = std::max<int64_t>(0, kv_cache_bytes / layout.page_bytes / layout.group_size);
  pool.usable_blocks = std::max<int64_t>(0, pool.num_blocks - 1);  // block 0 is the null block
  pool.blocks_per_request = layout.BlocksPerRequest(layout.max_model_len, layout.mamba_mode);
  pool.max_concurrency =
      static_cast<double>(pool.usable_blocks) / static_cast<double>(pool.blocks_per_request);
  return pool;
}

}  // namespace fleetsim
