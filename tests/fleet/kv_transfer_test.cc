// The KV transfer model of prefill/decode disaggregation (docs/DISAGGREGATION.md), against
// numbers worked by hand from the catalog's links and NCCL's tables.
#include "fleet/kv_transfer.h"

#include <gtest/gtest.h>

#include "core/project_paths.h"
#include "engine/engine_config.h"
#include "engine/kv_cache_layout.h"
#include "model/model_catalog.h"

namespace fleetsim {
namespace {

InputError NoError(std::string_view setting, const std::string& message) {
  return InputError("test", 0, std::string(setting), message);
}

KvCacheLayout LayoutOf(const std::string& model, int tp, bool prefix_caching,
                       int speculative_tokens = 0) {
  const ModelCard card = ModelCatalog(ModelsDir()).Load(model);
  EngineConfig config;
  config.tensor_parallel_size = tp;
  config.enable_prefix_caching = prefix_caching;
  config.num_speculative_tokens = speculative_tokens;
  const ResolvedEngineConfig engine = ResolveEngineConfig(card, config, std::nullopt, NoError);
  return ResolveKvCacheLayout(card, engine, NoError);
}

TEST(KvTransfer, H100LinksPerGpu) {
  const HardwareSpec h100 = LoadHardware(HardwareCatalogDir(), "H100-SXM");
  // 18 NVLinks x NCCL's SM90_NVLINK_BW 20.6 GB/s; PCIe Gen5 x16 as NCCL reads it:
  // 16 x 240 / 80 = 48 GB/s; one ConnectX-7 400 Gb/s NIC per GPU: 50 GB/s.
  EXPECT_DOUBLE_EQ(GpuLinkBytesPerS(h100, KvLinkKind::kNvlink), 370.8e9);
  EXPECT_DOUBLE_EQ(GpuLinkBytesPerS(h100, KvLinkKind::kPcie), 48e9);
  EXPECT_DOUBLE_EQ(GpuLinkBytesPerS(h100, KvLinkKind::kNetwork), 50e9);
}

TEST(KvTransfer, DenseBytesAreWholeBlocksOfEveryRank) {
  // Llama-3.1-8B: 32 layers x 8 KV heads x 128 x (K, V) x 2 B = 131,072 B per token; at
  // TP 2 each rank holds half. 2,969 tokens fill 186 blocks of 16 = 2,976 tokens.
  const KvCacheLayout layout = LayoutOf("llama-3.1-8b", 2, false);
  EXPECT_EQ(layout.kv_bytes_per_token_rank, 65'536);
  EXPECT_EQ(KvTransferBytes(layout, 2'969), int64_t{2'976} * 131'072);
  EXPECT_EQ(KvTransferBytes(layout, 16), int64_t{16} * 131'072);
  EXPECT_EQ(KvTransferBytes(layout, 17), int64_t{32} * 131'072);
}

TEST(KvTransfer, HybridBytesCarryTheGdnState) {
  // The 27B hybrid at TP 1 (cache_shapes.h): a GDN layer's state is conv 61,440 B + ssm
  // 3,145,728 B; 48 GDN layers make 153,944,064 B per sequence. Its 16 attention layers
  // hold 4 KV heads x (256 + 256) x 2 B = 4,096 B per token each: 65,536 B per token.
  const KvCacheLayout layout = LayoutOf("qwen3.8-27b", 1, false);
  EXPECT_EQ(layout.state_bytes_per_sequence, 153'944'064);
  EXPECT_EQ(layout.kv_bytes_per_token_rank, 65'536);
  const int64_t block = layout.block_size;
  EXPECT_EQ(KvTransferBytes(layout, 1), block * 65'536 + 153'944'064);
}

TEST(KvTransfer, WithMtpTheDraftLayersKvMovesToo) {
  // The 27B with MTP (k = 2) at TP 1: its one MTP layer is a 17th attention layer of
  // 4,096 B per token, in the same blocks, so a block moves 17 x 4,096 = 69,632 B per
  // token; the GDN state is the target's.
  const KvCacheLayout layout = LayoutOf("qwen3.8-27b", 1, false, 2);
  ASSERT_EQ(layout.draft_attention_layers, 1);
  const int64_t block = layout.block_size;
  EXPECT_EQ(KvTransferBytes(layout, 1) - layout.state_bytes_per_sequence, block * 69'632);
}

TEST(KvTransfer, TimeIsLatencyPlusBytesOverTheSharedLink) {
  // One TP 1 prefill GPU to a TP 2 decode instance on the same H100 node: one GPU pair
  // over NVLink, 370.8 GB/s, NCCL's NVLink hop latency 3.4 us. 390,070,272 B take
  // 1,051,969.45 ns, rounded up: 1,051,970 ns; plus 3,400 ns. (Two in flight: 2,103,938.9,
  // rounded up.)
  const KvLink nvlink{KvLinkKind::kNvlink, 370.8e9, KvLinkLatency(KvLinkKind::kNvlink)};
  EXPECT_EQ(KvTransferTime(nvlink, 390'070'272, 1), 1'055'370);
  // Two transfers in flight share it: each sees half the bandwidth.
  EXPECT_EQ(KvTransferTime(nvlink, 390'070'272, 2), 2'103'939 + 3'400);
  // Between nodes: TP 4 to TP 8, four NIC pairs of 50 GB/s, 9.6 us. 1 GB: 5 ms.
  const KvLink network{KvLinkKind::kNetwork, 4 * 50e9, KvLinkLatency(KvLinkKind::kNetwork)};
  EXPECT_EQ(KvTransferTime(network, 1'000'000'000, 1), 5'000'000 + 9'600);
  EXPECT_EQ(KvLinkLatency(KvLinkKind::kPcie), 5'700);
}

}  // namespace
}  // namespace fleetsim
