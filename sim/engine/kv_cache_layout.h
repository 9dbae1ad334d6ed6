// How one engine instance lays out its KV cache: the resolved block size, the cache
// groups sharing one block pool, and what a request holds (ENGINE_SEMANTICS.md
// sections 2-3; vLLM platforms/interface.py _align_hybrid_block_size and
// kv_cache_utils.py).
//
//   27B hybrid, TP 1, prefix caching on: block 784 (requested 16), 4 groups of 16 layers,
//   one pool block = 16 x 3,211,264 B; a request holds 6 pool blocks of GDN state; 60 GiB
//   -> 1,253 pool blocks, 1,252 usable after the null block.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "engine/engine_config.h"
#include "model/attention_backend.h"
#include "model/cache_shapes.h"
#include "model/hardware.h"
#include "model/model_card.h"

namespace fleetsim {

// Layers grouped by identical cache spec; one pool block holds one page per layer.
struct KvCacheGroup {
  LayerType type = LayerType::kFullAttention;
  // Model layer indices; an MTP layer is numbered after the target's (vLLM's
  // mtp_start_layer_idx = num_hidden_layers).
  std::vector<int> layers;
};

struct KvCacheLayout {
  int tp = 1;
  int kv_heads_per_rank = 0;
  int64_t attn_bytes_per_token_per_layer = 0;  // per rank
  int64_t kv_bytes_per_token_rank = 0;         // the target's attention layers, one rank
  int64_t kv_bytes_per_token_model = 0;        // the target's attention layers, unsharded
  // With MTP speculation, the MTP module's full-attention layers (vLLM registers them as
  // attention layers of their own: vllm/v1/spec_decode/llm_base_proposer.py load_model,
  // _draft_attn_layer_names); their identical FullAttentionSpec joins the target's
  // attention layers in one KV-cache group (kv_cache_utils.py
  // _get_kv_cache_groups_uniform_page_size), so they take pages in every pool block.
  int draft_attention_layers = 0;
  int64_t draft_kv_bytes_per_token_rank = 0;  // those layers, one rank
  int64_t KvBytesPerTokenRankWithDraft() const {
    return kv_bytes_per_token_rank + draft_kv_bytes_per_token_rank;
  }

  std::optional<GdnStateShape> gdn;      // hybrids only
  int64_t mamba_page_bytes = 0;          // unpadded, one layer
  int64_t mamba_page_padded_bytes = 0;   // padded to one attention page
  int64_t state_bytes_per_sequence = 0;  // unpadded, all GDN layers

  int requested_block_size = 0;  // the user's, or the backend's preferred 16
  bool block_size_given = false;
  int block_size = 0;  // resolved
  bool block_size_overridden() const { return block_size != requested_block_size; }

  int64_t page_bytes = 0;  // one layer's page in the pool
  int group_size = 0;      // pages per pool block
  int64_t pool_block_bytes = 0;
  std::vector<KvCacheGroup> groups;

  MambaCacheMode mamba_mode = MambaCacheMode::kNone;
  int64_t mamba_block_tokens = 0;  // tokens one state page stands for
  // The hybrid alignment base: the attention backend's smallest kernel block size (16
  // without a GPU to select a backend on).
  int alignment_base = 16;
  // The attention backend and decode kernel, when the layout was resolved on a GPU.
  // Shared, not copied: every instance's cache manager keeps a copy of its layout, and the
  // plan's names and reasons are two of an instance's six kilobytes.
  std::shared_ptr<const AttentionPlan> attention;
  int num_spec = 0;
  int64_t max_model_len = 0;

  int AttentionGroups() const;
  int GdnGroups() const;
  // Pool blocks one request holds at `tokens`, in the given mode.
  int64_t BlocksPerRequest(int64_t tokens, MambaCacheMode mode) const;
  // Pool blocks of GDN state one request holds (pages per GDN layer x layers / group size).
  int64_t StateBlocksPerRequest(MambaCacheMode mode) const;
};

// The block size vLLM's cache config defaults to (ENGINE_SEMANTICS.md s. 2), and the
// alignment base without a GPU to select a backend on: every backend the catalog describes
// has 16 as its smallest kernel block size.
inline constexpr int kBackendPreferredBlockSize = 16;
inline constexpr int kBackendMinKernelBlockSize = 16;

// What vLLM's attention selector sees of this model and engine on one rank.
AttentionQuery AttentionQueryOf(const ModelCard& card, const ResolvedEngineConfig& engine);

// Resolves the block size and groups, and applies the align-mode checks that need the
// block size (block <= max_num_batched_tokens, long_prefill_token_threshold >= block).
// With a GPU, vLLM's attention backend is selected first (its smallest kernel block size
// is the hybrid alignment base), then -- for the resolved block size -- its decode kernel
// (layout.attention); an impossible attention_backend or decode_kernel pin is `error`.
KvCacheLayout ResolveKvCacheLayout(const ModelCard& card, const ResolvedEngineConfig& engine,
                                   const SettingError& error,
                                   const HardwareSpec* hardware = nullptr);

struct PoolCapacity {
  int64_t kv_cache_bytes = 0;
  int64_t num_blocks = 0;     // including the null block
  int64_t usable_blocks = 0;  // num_blocks - 1
  int64_t blocks_per_request = 0;
  double max_concurrency = 0;  // usable blocks / blocks per request at max_model_len
};

PoolCapacity SizePool(const KvCacheLayout& layout, int64_t kv_cache_bytes);

}  // namespace fleetsim
