// The attention part of the analytic kernel model: how a call's queries become tiles on
// the SMs, per the catalog's attention_backend (FlashAttention 3 packs a KV group's query
// heads into 128-row tiles; FlashAttention 2 gives each query head its own 64-row tiles).
// These check the structure, which follows from the kernels' source, not fitted numbers.
#include <gtest/gtest.h>

#include "core/project_paths.h"
#include "model/hardware.h"
#include "perf/analytic_kernels.h"

namespace fleetsim {
namespace {

// Llama-3.1-8B at TP 1: 32 query heads, 8 KV heads, head_dim 128.
constexpr double kQ = 32, kKv = 8, kDim = 128;

KernelRoofline Roofline(const std::string& gpu) {
  return KernelRoofline(LoadHardware(HardwareCatalogDir(), gpu), Dtype::kBfloat16);
}

TEST(AttentionModel, FlashAttentionTwoPrefillRunsInWavesOfOneTilePerSm) {
  // RTX 4090: 128 SMs. A chunk over a long history runs ceil(chunk / 64) x 32 tiles, each
  // walking about the whole history: up to 256 tokens that is one wave, so the cost barely
  // moves; 512 tokens is two waves and costs twice as much.
  const KernelRoofline r = Roofline("RTX-4090");
  const double history = 16384;
  const double c16 = r.AttentionPrefillUs(1, 16, history, kQ, kKv, kDim);
  const double c256 = r.AttentionPrefillUs(1, 256, history, kQ, kKv, kDim);
  const double c512 = r.AttentionPrefillUs(1, 512, history, kQ, kKv, kDim);
  EXPECT_LT(c256 / c16, 1.05);
  EXPECT_GT(c512 / c256, 1.9);
  EXPECT_LT(c512 / c256, 2.1);
}

TEST(AttentionModel, UnpackedShortChunksDoTwiceThePaddedWorkOfPackedOnes) {
  // 16-token chunks with 4 query heads per KV head: a packed 128-row tile holds the group's
  // 64 rows, an unpacked 64-row tile one head's 16 -- 2x the padded rows per KV head. With
  // 64 such chunks the SMs are full either way, so the unpacked call takes about twice as
  // long (a little more: four times the tiles, each with its fixed cost).
  HardwareSpec gpu = LoadHardware(HardwareCatalogDir(), "H200-SXM");
  const KernelRoofline packed(gpu, Dtype::kBfloat16);
  AttentionPlan fa2_tiles = DefaultAttentionPlan(gpu.attention);
  fa2_tiles.backend.query_tile_rows = 64;
  fa2_tiles.backend.packs_gqa = false;
  const KernelRoofline unpacked(gpu, Dtype::kBfloat16, fa2_tiles);
  const double ratio = unpacked.AttentionPrefillUs(64, 16, 4096, kQ, kKv, kDim) /
                       packed.AttentionPrefillUs(64, 16, 4096, kQ, kKv, kDim);
  EXPECT_GT(ratio, 1.8);
  EXPECT_LT(ratio, 2.5);
}

TEST(AttentionModel, OneTokenQueriesAreADecodeCall) {
  // FA2 packs the group's heads (and may split KV) exactly when every query has one token.
  const KernelRoofline r = Roofline("A100-SXM-80GB");
  EXPECT_DOUBLE_EQ(r.AttentionPrefillUs(256, 1, 0, kQ, kKv, kDim),
                   r.AttentionDecodeUs(256, 1, kQ, kKv, kDim));
  EXPECT_GT(r.AttentionPrefillUs(256, 2, 0, kQ, kKv, kDim),
            r.AttentionDecodeUs(256, 2, kQ, kKv, kDim));
}

TEST(AttentionModel, FlashAttentionTwoSplitsADecodeOnlyWithGroupedQueryHeads) {
  // One sequence over 128k tokens on one KV head. With two query heads per KV head FA2
  // swaps them into the query and splits the KV over the SMs; with one (MHA) it runs a
  // single tile on a single SM. FA3 (H100) and ROCm (MI300X) split either way.
  const double kv = 131072;
  const KernelRoofline fa2 = Roofline("A100-SXM-80GB");
  const double grouped = fa2.AttentionDecodeUs(1, kv, 2, 1, kDim);
  const double mha = fa2.AttentionDecodeUs(1, kv, 1, 1, kDim);
  EXPECT_GT(mha / grouped, 20);                     // the A100's 108 SMs against one
  for (const char* gpu : {"H100-SXM", "MI300X"}) {  // FA3; ROCm's partitioned decode
    const KernelRoofline r = Roofline(gpu);
    EXPECT_LT(r.AttentionDecodeUs(1, kv, 1, 1, kDim) / r.AttentionDecodeUs(1, kv, 2, 1, kDim), 1.1)
        << gpu;
  }
}

TEST(AttentionModel, AFlashAttentionTwoDecodeInAMixedBatchCostsAPaddedTilePerHead) {
  // One decode over 16k keys beside a 16-token chunk with no history: the decode loses
  // its packing and split and runs 32 tiles of 64 padded rows over 16k keys -- what a
  // 16-token chunk over 16k keys costs, and far more than the same decode alone.
  const KernelRoofline r = Roofline("RTX-4090");
  const double mixed = r.AttentionMixedUs(16, 0, 1, 16384, kQ, kKv, kDim);
  const double chunk_over_history = r.AttentionPrefillUs(1, 16, 16384, kQ, kKv, kDim);
  EXPECT_NEAR(mixed / chunk_over_history, 1.0, 0.05);
  EXPECT_GT(mixed, 5 * r.AttentionDecodeUs(1, 16384, kQ, kKv, kDim));
}

TEST(AttentionModel, AFlashAttentionTwoMixedCallLaunchesEveryDecodeTheChunksQueryBlocks) {
  // 128 decodes beside a 1,024-token chunk: FA2's grid gives every sequence 16 query blocks
  // per head, so each decode's 15 past its one token are empty tiles -- 61,440 on the
  // 4090's 128 SMs, each taking attention_empty_tile_s of one. Beside a 64-token chunk
  // (one block) there are none.
  const HardwareSpec gpu = LoadHardware(HardwareCatalogDir(), "RTX-4090");
  AnalyticConstants none;
  none.attention_empty_tile_s = 0;
  const KernelRoofline with(gpu, Dtype::kBfloat16);
  const KernelRoofline without(gpu, Dtype::kBfloat16, none);
  const double empties = 15.0 * 128 * kQ;
  EXPECT_NEAR(with.AttentionMixedUs(1024, 0, 128, 16, kQ, kKv, kDim) -
                  without.AttentionMixedUs(1024, 0, 128, 16, kQ, kKv, kDim),
              empties / 128 * with.constants().attention_empty_tile_s * 1e6, 1e-9);
  EXPECT_DOUBLE_EQ(with.AttentionMixedUs(64, 0, 128, 16, kQ, kKv, kDim),
                   without.AttentionMixedUs(64, 0, 128, 16, kQ, kKv, kDim));
  EXPECT_DOUBLE_EQ(with.AttentionPrefillUs(1, 1024, 0, kQ, kKv, kDim),
                   without.AttentionPrefillUs(1, 1024, 0, kQ, kKv, kDim));
  // FA3 (H200) schedules only real tiles.
  const HardwareSpec h200 = LoadHardware(HardwareCatalogDir(), "H200-SXM");
  EXPECT_DOUBLE_EQ(
      KernelRoofline(h200, Dtype::kBfloat16).AttentionMixedUs(1024, 0, 128, 16, kQ, kKv, kDim),
      KernelRoofline(h200, Dtype::kBfloat16, none)
          .AttentionMixedUs(1024, 0, 128, 16, kQ, kKv, kDim));
}

TEST(AttentionModel, UnpackedHeadsShareKvInL2OnlyWhileResidentTogether) {
  // 4090, 128 SMs: 32 decodes put 33 tiles per head in the grid, so ~4 heads (a whole
  // group) run together and read the group's K and V once: compute-bound, ~9 waves of
  // 16k-key tiles. 256 decodes put one head's tiles on every SM: each of the 4 heads reads
  // the group's K and V again, so the call streams 4x the KV and is memory-bound.
  const HardwareSpec gpu = LoadHardware(HardwareCatalogDir(), "RTX-4090");
  const KernelRoofline r(gpu, Dtype::kBfloat16);
  const double kv_bytes_per_head_read = 256 * 16384.0 * kKv * 2 * kDim * 2;
  const double stream_us = kv_bytes_per_head_read / gpu.memory_bandwidth_bytes_per_s.value * 1e6;
  EXPECT_GT(r.AttentionMixedUs(16, 0, 256, 16384, kQ, kKv, kDim), (kQ / kKv) * stream_us);
  const double few = r.AttentionMixedUs(16, 0, 32, 16384, kQ, kKv, kDim);
  EXPECT_LT(few, (kQ / kKv) * stream_us * 32 / 256);
}

TEST(AttentionModel, PackedBackendsRunAMixedStepAsOneLaunch) {
  // FA3 schedules the chunk's and the decodes' tiles in one grid: the work adds up, the
  // call's fixed cost is paid once.
  const KernelRoofline r = Roofline("H200-SXM");
  const double prefill = r.AttentionPrefillUs(1, 512, 4096, kQ, kKv, kDim);
  const double decode = r.AttentionDecodeUs(64, 4096, kQ, kKv, kDim);
  EXPECT_DOUBLE_EQ(r.AttentionMixedUs(512, 4096, 64, 4096, kQ, kKv, kDim),
                   prefill + decode - r.constants().attention_launch_s * 1e6);
}

}  // namespace
}  // namespace fleetsim
