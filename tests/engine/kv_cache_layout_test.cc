// The worked values of ENGINE_SEMANTICS.md sections 2-3 and 8, end to end from the
// shipped model cards.
#include "engine/kv_cache_layout.h"

#include <gtest/gtest.h>

#include "engine/test_models.h"

namespace fleetsim {
namespace {

using testing::Card;
using testing::Resolve;
using testing::SettingErrorFor;

KvCacheLayout Layout(const std::string& model, EngineConfig config = {}) {
  const ModelCard& card = Card(model);
  return ResolveKvCacheLayout(card, Resolve(card, config), SettingErrorFor);
}

EngineConfig Tp(int tp, bool prefix_caching = false) {
  EngineConfig config;
  config.tensor_parallel_size = tp;
  config.enable_prefix_caching = prefix_caching;
  return config;
}

TEST(KvCacheLayout, HybridBlockSizePerTp) {
  EXPECT_EQ(Layout("qwen3.8-27b", Tp(1)).block_size, 784);
  EXPECT_EQ(Layout("qwen3.8-27b", Tp(2)).block_size, 784);
  EXPECT_EQ(Layout("qwen3.8-27b", Tp(4)).block_size, 784);
  EXPECT_EQ(Layout("qwen3.8-27b", Tp(8)).block_size, 400);
  EXPECT_EQ(Layout("qwen3-next-80b-a3b", Tp(1)).block_size, 544);
}

TEST(KvCacheLayout, Bf16SsmStateHalvesTheBlock) {
  EngineConfig config = Tp(1);
  config.mamba_ssm_cache_dtype = "bfloat16";
  const KvCacheLayout layout = Layout("qwen3.8-27b", config);
  EXPECT_EQ(layout.mamba_page_bytes, 1634304);
  EXPECT_EQ(layout.block_size, 400);
}

TEST(KvCacheLayout, BlockSizeOverridesTheRequest) {
  const KvCacheLayout layout = Layout("qwen3.8-27b", Tp(1, true));
  EXPECT_EQ(layout.requested_block_size, 16);
  EXPECT_TRUE(layout.block_size_overridden());
  EngineConfig config = Tp(1);
  config.block_size = 1024;  // larger than needed: kept, one page still covers the state
  const KvCacheLayout big = Layout("qwen3.8-27b", config);
  EXPECT_EQ(big.block_size, 1024);
  EXPECT_FALSE(big.block_size_overridden());
  EXPECT_EQ(big.mamba_page_padded_bytes, 1024 * 4096);
}

TEST(KvCacheLayout, Qwen27BPagesAndState) {
  const KvCacheLayout layout = Layout("qwen3.8-27b", Tp(1, true));
  EXPECT_EQ(layout.mamba_page_bytes, 3207168);
  EXPECT_EQ(layout.mamba_page_padded_bytes, 3211264);
  EXPECT_EQ(layout.page_bytes, 3211264);
  EXPECT_EQ(layout.state_bytes_per_sequence, 153944064);  // 153.9 MB
  EXPECT_EQ(layout.kv_bytes_per_token_model, 65536);
  EXPECT_EQ(layout.kv_bytes_per_token_rank, 65536);
  EXPECT_EQ(layout.pool_block_bytes, 51380224);
}

TEST(KvCacheLayout, Qwen27BGroups) {
  const KvCacheLayout layout = Layout("qwen3.8-27b", Tp(1, true));
  EXPECT_EQ(layout.group_size, 16);
  ASSERT_EQ(layout.groups.size(), 4u);
  EXPECT_EQ(layout.AttentionGroups(), 1);
  EXPECT_EQ(layout.GdnGroups(), 3);
  for (const KvCacheGroup& group : layout.groups)
    EXPECT_EQ(group.layers.size(), 16u);
  // vLLM's order: types as they first appear (layer 0 is GDN), so three GDN groups, then
  // attention. GDN layers 0,1,2,4,5,6,... split round-robin: group 0 takes 0,4,8...
  EXPECT_EQ(layout.groups[0].type, LayerType::kLinearAttention);
  EXPECT_EQ(layout.groups[0].layers[0], 0);
  EXPECT_EQ(layout.groups[0].layers[1], 4);
  EXPECT_EQ(layout.groups[2].layers[0], 2);
  EXPECT_EQ(layout.groups[3].type, LayerType::kFullAttention);
  EXPECT_EQ(layout.groups[3].layers.front(), 3);
}

TEST(KvCacheLayout, StateBlocksPerRequestByMode) {
  const KvCacheLayout layout = Layout("qwen3.8-27b", Tp(1, true));
  // 48 layers x 2 pages = 96 pages = 6 pool blocks in align mode; 3 in mode none.
  EXPECT_EQ(layout.StateBlocksPerRequest(MambaCacheMode::kAlign), 6);
  EXPECT_EQ(layout.StateBlocksPerRequest(MambaCacheMode::kNone), 3);
  EXPECT_EQ(layout.mamba_mode, MambaCacheMode::kAlign);
  EXPECT_EQ(layout.mamba_block_tokens, 784);
  EXPECT_EQ(Layout("qwen3.8-27b", Tp(1, false)).mamba_block_tokens, 262144);
}

TEST(KvCacheLayout, BlocksForALongRequest) {
  const KvCacheLayout layout = Layout("qwen3.8-27b", Tp(1, true));
  EXPECT_EQ(layout.BlocksPerRequest(262144, MambaCacheMode::kNone), 338);
  EXPECT_EQ(layout.BlocksPerRequest(262144, MambaCacheMode::kAlign), 341);
}

TEST(KvCacheLayout, SpeculativeTokensAddStatePages) {
  EngineConfig config = Tp(1, true);
  config.num_speculative_tokens = 1;
  const KvCacheLayout layout = Layout("qwen3.8-27b", config);
  EXPECT_EQ(layout.StateBlocksPerRequest(MambaCacheMode::kAlign), 3 * 3);
  EXPECT_EQ(layout.mamba_page_bytes, 4 * 10240 * 2 + 3145728);
}

TEST(KvCacheLayout, TheMtpLayerJoinsTheAttentionGroupAndWidensThePoolBlock) {
  // With MTP speculation vLLM registers the MTP module's full-attention layer (the
  // config's mtp_num_hidden_layers: 1) as a 17th attention layer of the same spec, so the
  // uniform-page grouping sees 17 attention + 48 GDN layers: 48 >= 1.5 x 17, group size 17;
  // GDN splits into cdiv(48, 17) = 3 groups (16 layers each, one padding page), attention
  // is one group of 17, the MTP layer (numbered 64) last.
  EngineConfig config = Tp(1, true);
  config.num_speculative_tokens = 2;
  const KvCacheLayout layout = Layout("qwen3.8-27b", config);
  EXPECT_EQ(layout.draft_attention_layers, 1);
  EXPECT_EQ(layout.attn_bytes_per_token_per_layer, 4 * (256 + 256) * 2);
  EXPECT_EQ(layout.kv_bytes_per_token_rank, 16 * 4096);
  EXPECT_EQ(layout.KvBytesPerTokenRankWithDraft(), 17 * 4096);
  EXPECT_EQ(layout.group_size, 17);
  ASSERT_EQ(layout.groups.size(), 4u);
  for (int g = 0; g < 3; ++g) {
    EXPECT_EQ(layout.groups[static_cast<std::size_t>(g)].type, LayerType::kLinearAttention);
    EXPECT_EQ(layout.groups[static_cast<std::size_t>(g)].layers.size(), 16u);
  }
  EXPECT_EQ(layout.groups[3].type, LayerType::kFullAttention);
  ASSERT_EQ(layout.groups[3].layers.size(), 17u);
  EXPECT_EQ(layout.groups[3].layers.back(), 64);
  // The page is the target's: mamba page (3 + 2) x 10,240 x 2 + 3,145,728 = 3,248,128 B,
  // block 16 x ceil(3,248,128 / (16 x 4,096)) = 800, page 800 x 4,096 = 3,276,800 B; a
  // pool block is 17 pages = 55,705,600 B (16 pages without the MTP layer).
  EXPECT_EQ(layout.block_size, 800);
  EXPECT_EQ(layout.page_bytes, 3'276'800);
  EXPECT_EQ(layout.pool_block_bytes, 55'705'600);
  // A request's blocks: the one attention group's ceil(262,144 / 800) = 328 plus 3 GDN
  // groups x (2 + 2) align-mode state pages = 340; the MTP layer rides in the same blocks.
  EXPECT_EQ(layout.BlocksPerRequest(262144, MambaCacheMode::kAlign), 340);
  // 60 GiB = 64,424,509,440 B / 55,705,600 B = 1,156 blocks (it would be 1,253 at 16 pages
  // of the 784-token block without speculation).
  EXPECT_EQ(SizePool(layout, 60LL << 30).num_blocks, 1156);
  // Without speculation the MTP layer is not loaded: no page for it.
  const KvCacheLayout off = Layout("qwen3.8-27b", Tp(1, true));
  EXPECT_EQ(off.draft_attention_layers, 0);
  EXPECT_EQ(off.group_size, 16);
  EXPECT_EQ(off.KvBytesPerTokenRankWithDraft(), 16 * 4096);
}

TEST(KvCacheLayout, PoolFor60GiB) {
  const PoolCapacity pool = SizePool(Layout("qwen3.8-27b", Tp(1, true)), 60LL << 30);
  EXPECT_EQ(pool.num_blocks, 1253);
  EXPECT_EQ(pool.usable_blocks, 1252);
  EXPECT_EQ(pool.blocks_per_request, 341);
  EXPECT_DOUBLE_EQ(pool.max_concurrency, 1252.0 / 341.0);
}

TEST(KvCacheLayout, GroupSizeTakesTheLargestCountWhenTypesAreNearlyBalanced) {
  // 10 attention + 14 GDN layers: 14 < 1.5 x 10, so vLLM uses group size 14 (one group
  // per type) instead of splitting the GDN layers into two groups of 10.
  ModelCard card = Card("qwen3.8-27b");
  card.layers.assign(24, LayerType::kLinearAttention);
  for (int i : {1, 3, 5, 7, 9, 11, 13, 15, 17, 19}) {
    card.layers[static_cast<std::size_t>(i)] = LayerType::kFullAttention;
  }
  card.moe_layers.assign(24, false);
  const KvCacheLayout balanced = ResolveKvCacheLayout(card, Resolve(card, {}), SettingErrorFor);
  EXPECT_EQ(balanced.group_size, 14);
  EXPECT_EQ(balanced.groups.size(), 2u);
  // 8 attention + 16 GDN: 16 >= 1.5 x 8, so the group size is 8 and GDN splits in two.
  card.layers.assign(24, LayerType::kLinearAttention);
  for (int i = 2; i < 24; i += 3)
    card.layers[static_cast<std::size_t>(i)] = LayerType::kFullAttention;
  const KvCacheLayout split = ResolveKvCacheLayout(card, Resolve(card, {}), SettingErrorFor);
  EXPECT_EQ(split.group_size, 8);
  EXPECT_EQ(split.AttentionGroups(), 1);
  EXPECT_EQ(split.GdnGroups(), 2);
}

TEST(KvCacheLayout, DenseModelsKeepBlock16) {
  for (const char* model :
       {"llama-3.1-8b", "llama-3.1-70b", "qwen3-8b", "qwen3-32b", "qwen3-30b-a3b"}) {
    SCOPED_TRACE(model);
    const KvCacheLayout layout = Layout(model, Tp(1, true));
    EXPECT_EQ(layout.block_size, 16);
    EXPECT_FALSE(layout.gdn);
    ASSERT_EQ(layout.groups.size(), 1u);  // one group of every layer
    EXPECT_EQ(layout.group_size, Card(model).NumLayers());
  }
}

TEST(KvCacheLayout, LlamaKvBytesPerTokenAndPool) {
  const KvCacheLayout layout = Layout("llama-3.1-8b", Tp(1));
  EXPECT_EQ(layout.kv_bytes_per_token_model, 131072);
  EXPECT_EQ(layout.page_bytes, 16 * 4096);
  // One pool block holds 16 tokens of all 32 layers: 2 MiB.
  EXPECT_EQ(layout.pool_block_bytes, 16 * 131072);
  const PoolCapacity pool = SizePool(layout, 10LL << 30);
  EXPECT_EQ(pool.num_blocks, (10LL << 30) / (16 * 131072));
  EXPECT_EQ(pool.blocks_per_request, 131072 / 16);
}

TEST(KvCacheLayout, TpShardsKvBytesPerRank) {
  const KvCacheLayout layout = Layout("qwen3.8-27b", Tp(8));
  EXPECT_EQ(layout.kv_heads_per_rank, 1);
  EXPECT_EQ(layout.kv_bytes_per_token_rank, 16 * 1024);
  EXPECT_EQ(layout.kv_bytes_per_token_model, 65536);
}

InputError LayoutError(EngineConfig config) {
  return testing::CatchInputError([&] { Layout("qwen3.8-27b", config); });
}

TEST(KvCacheLayout, AlignModeRefusesABudgetBelowTheBlock) {
  EngineConfig config = Tp(1, true);
  config.max_num_batched_tokens = 512;
  EXPECT_EQ(LayoutError(config).field(), "max_num_batched_tokens");
  config.max_num_batched_tokens = 784;  // exactly one block is fine
  EXPECT_NO_THROW(Layout("qwen3.8-27b", config));
}

TEST(KvCacheLayout, AlignModeRefusesALongPrefillThresholdBelowTheBlock) {
  EngineConfig config = Tp(1, true);
  config.long_prefill_token_threshold = 500;
  EXPECT_EQ(LayoutError(config).field(), "long_prefill_token_threshold");
  config.long_prefill_token_threshold = 784;
  EXPECT_NO_THROW(Layout("qwen3.8-27b", config));
  // Mode none checkpoints nothing, so neither check applies.
  config = Tp(1, false);
  config.long_prefill_token_threshold = 500;
  config.max_num_batched_tokens = 512;
  EXPECT_NO_THROW(Layout("qwen3.8-27b", config));
}

}  // namespace
}  // namespace fleetsim
