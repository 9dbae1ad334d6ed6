// Decode kernels priced by their launch grid (perf/decode_kernels.h). The expected values
// are worked out by hand from the catalog's sourced figures: the RX 7900 XT's 84 CUs and
// 800 GB/s, the Triton 2D kernel's 27.5 GB/s per program (vllm PR 58156), and the
// calibrated constants; and PR 45916's split heuristic replayed by hand.
#include "perf/decode_kernels.h"

#include <gtest/gtest.h>

#include "core/project_paths.h"
#include "model/hardware.h"
#include "perf/analytic_kernels.h"

namespace fleetsim {
namespace {

const SettingError kError = [](std::string_view setting, const std::string& message) {
  return InputError("", 0, std::string(setting), message);
};

// The 27B hybrid at TP 2 on an RX 7900 XT, with its 784-token block, on `kernel`.
AttentionPlan RdnaPlan(const std::string& kernel) {
  const HardwareSpec gpu = LoadHardware(HardwareCatalogDir(), "RX-7900-XT");
  AttentionPlan plan;
  plan.backend = *gpu.attention.Find("ROCM_ATTN");
  plan.decode = *plan.backend.FindDecodeKernel(kernel);
  plan.kernel_block_size = 784;
  plan.reported_processors = gpu.attention.reported_processors;
  return plan;
}

KernelRoofline Rdna(const std::string& kernel) {
  return KernelRoofline(LoadHardware(HardwareCatalogDir(), "RX-7900-XT"), Dtype::kBfloat16,
                        RdnaPlan(kernel));
}

constexpr double kLaunchUs = 1.8263082210364104;  // AnalyticConstants::gdn_update_launch_s

TEST(DecodeKernels, TwoProgramsStreamTheContextAtThePerProgramRate) {
  // One sequence, 2 KV heads of 256 per rank: 2 programs on 84 CUs. Each streams K and V
  // of its head, 2 x 256 x 2 B = 1,024 B per token, at 27.5 GB/s: over 32,769 tokens
  // 1,220.2 us, plus one small-kernel launch. The whole call's 67 MB would take 105 us at
  // the card's bandwidth: occupancy, not bytes, sets the cost.
  const KernelRoofline r = Rdna("triton_paged_attention_2d");
  const DecodeGridReport g = r.DecodeLaunch(1, 32769, 12, 2, 256);
  EXPECT_DOUBLE_EQ(g.programs, 2);
  EXPECT_DOUBLE_EQ(g.waves, 1);
  EXPECT_NEAR(g.Us(), 32769 * 1024 / 27.5e9 * 1e6 + kLaunchUs, 1e-6);
  EXPECT_NE(g.bound.find("occupancy"), std::string::npos) << g.bound;
  // Twice the KV heads run side by side: the same time. Twice the context: twice the time.
  EXPECT_NEAR(r.DecodeLaunch(1, 32769, 24, 4, 256).Us(), g.Us(), 1e-6);
  EXPECT_NEAR(r.DecodeLaunch(1, 65538, 12, 2, 256).Us() - kLaunchUs, 2 * (g.Us() - kLaunchUs),
              1e-6);
}

TEST(DecodeKernels, OnTheTwoDimensionalKernelTheLongestSequenceSetsTheWave) {
  // Decode skew: 4 sequences x 2 heads = 8 programs, one wave on 84 CUs. Three sequences
  // hold 8,000 tokens and one 32,000 (mean 14,000). The wave lasts as long as the longest
  // program: 32,000 x 1,024 B at 27.5 GB/s = 1,191.6 us, plus one launch -- what the
  // uniform batch at 32,000 costs, since the bandwidth (4 x 2 x 14,000 x 1,024 B = 115 MB
  // at 800 GB/s x 0.7966: 180 us) does not bind either.
  const KernelRoofline r = Rdna("triton_paged_attention_2d");
  const DecodeGridReport skewed = r.DecodeLaunch(4, 14000, 12, 2, 256, 32000);
  EXPECT_DOUBLE_EQ(skewed.programs, 8);
  EXPECT_NEAR(skewed.Us(), 32000 * 1024 / 27.5e9 * 1e6 + kLaunchUs, 1e-6);
  EXPECT_NEAR(skewed.Us(), r.DecodeLaunch(4, 32000, 12, 2, 256).Us(), 1e-6);
  // At the mean it would be 14,000 tokens' worth; a longest of 0 (or the mean) is uniform.
  EXPECT_NEAR(r.DecodeLaunch(4, 14000, 12, 2, 256).Us(), 14000 * 1024 / 27.5e9 * 1e6 + kLaunchUs,
              1e-6);
  EXPECT_DOUBLE_EQ(r.DecodeLaunch(4, 14000, 12, 2, 256, 14000).Us(),
                   r.DecodeLaunch(4, 14000, 12, 2, 256).Us());
}

TEST(DecodeKernels, ManySequencesAreBoundByTheBandwidth) {
  // 128 sequences x 2 heads = 256 programs in 4 waves over 84 CUs (4 x 37 us at 1,024
  // tokens), but their 268 MB take 421 us at 800 GB/s x 0.7966: the bandwidth binds.
  const KernelRoofline r = Rdna("triton_paged_attention_2d");
  const DecodeGridReport g = r.DecodeLaunch(128, 1024, 12, 2, 256);
  EXPECT_DOUBLE_EQ(g.waves, 4);
  EXPECT_EQ(g.bound, "bandwidth");
  const double bytes = 256 * 1024 * 1024.0 + 128 * 12 * 2 * 256 * 2;  // KV, then Q and O
  EXPECT_NEAR(g.Us(), bytes / (800e9 * AnalyticConstants{}.memory_efficiency) * 1e6 + kLaunchUs,
              1e-6);
}

TEST(DecodeKernels, TheSplitKvHeuristicAsPr45916WritesIt) {
  // The compute block of a 784-token block is 16 (784 = 16 x 49, not a multiple of 32).
  // 32,768 tokens: 2,048 blocks >= 2 x 42. Batch 1 x 2 heads = 2 workgroups against a
  // target of 84: efficiency 2s / 84 peaks at s = 16 (0.381); the smallest split within
  // 0.85 of it is 14 (0.333), rounded up to a power of two: 16.
  EXPECT_EQ(TritonSplitKvSplits(1, 2, 256, 784, 32768, 42, 16), 16);
  // 1,024 tokens are 64 blocks, fewer than 2 x 42: no split (the 2D kernel runs).
  EXPECT_EQ(TritonSplitKvSplits(1, 2, 256, 784, 1024, 42, 16), 1);
  // 34 sequences x 2 heads = 68 >= 0.8 x 84: the grid fills the card already.
  EXPECT_EQ(TritonSplitKvSplits(34, 2, 256, 784, 32768, 42, 16), 1);
  // 33 x 2 = 66 workgroups: efficiency (66s / 84) / whole waves is 0.786 for s = 1 to 4,
  // 0.982 at s = 5 (3.93 of 4 waves) and best at s = 14 (11 waves exactly, 1.0); the
  // smallest within 0.85 of the best is s = 5, rounded up to 8.
  EXPECT_EQ(TritonSplitKvSplits(33, 2, 256, 784, 32768, 42, 16), 8);
  // Small heads need 4,096 tokens before they split at all.
  EXPECT_EQ(TritonSplitKvSplits(1, 2, 64, 16, 2048, 42, 16), 1);
}

TEST(DecodeKernels, SplitKvSpreadsTheContextAndAddsAReduce) {
  const KernelRoofline split = Rdna("triton_paged_attention_2d_splitkv");
  const KernelRoofline unsplit = Rdna("triton_paged_attention_2d");
  // 32K: 16 splits x 2 heads = 32 programs of 2,048 tokens (2 MB each, 76 us at 27.5 GB/s),
  // one wave; the call's 67 MB at 637 GB/s (105 us) binds instead, plus the reduce.
  const DecodeGridReport g = split.DecodeLaunch(1, 32769, 12, 2, 256);
  EXPECT_DOUBLE_EQ(g.splits, 16);
  EXPECT_DOUBLE_EQ(g.programs, 32);
  EXPECT_EQ(g.bound, "bandwidth");
  EXPECT_GT(g.reduce_us, kLaunchUs);
  EXPECT_GT(unsplit.DecodeLaunch(1, 32769, 12, 2, 256).Us() / g.Us(), 8);
  // 1K: no split; the step runs the 2D kernel, at its cost.
  EXPECT_DOUBLE_EQ(split.DecodeLaunch(1, 1025, 12, 2, 256).Us(),
                   unsplit.DecodeLaunch(1, 1025, 12, 2, 256).Us());
}

TEST(DecodeKernels, RocmPagedAttentionPartitionsEveryHead) {
  // Qwen3-8B at TP 2 (4 KV heads of 128, GQA 4): 32,769 tokens are 129 partitions of 256,
  // 516 programs over 84 CUs: the bandwidth binds, and a reduce joins the partitions.
  const HardwareSpec gpu = LoadHardware(HardwareCatalogDir(), "RX-7900-XT");
  AttentionPlan plan = RdnaPlan("rocm_paged_attention");
  plan.kernel_block_size = 16;
  const KernelRoofline r(gpu, Dtype::kBfloat16, plan);
  const DecodeGridReport g = r.DecodeLaunch(1, 32769, 16, 4, 128);
  EXPECT_DOUBLE_EQ(g.splits, 129);
  EXPECT_DOUBLE_EQ(g.programs, 516);
  EXPECT_EQ(g.bound, "bandwidth");
  EXPECT_GT(g.reduce_us, 0);
  // At the hybrid's shape it would be 2 x 129 programs: against the Triton 2D kernel's 2,
  // the per-program rate no longer matters.
  const KernelRoofline twod = Rdna("triton_paged_attention_2d");
  EXPECT_GT(twod.DecodeLaunch(1, 32769, 16, 4, 128).Us() / g.Us(), 5);
}

TEST(DecodeKernels, MoreThanOneQueryTokenIsAPrefillCall) {
  // Speculative decoding: ROCm's dispatch sends query_len > 1 to the prefix-prefill kernel.
  const KernelRoofline r = Rdna("triton_paged_attention_2d");
  EXPECT_DOUBLE_EQ(r.AttentionDecodeUs(1, 4096, 12, 2, 256, /*kv_longest=*/0, /*query_len=*/3),
                   r.AttentionPrefillUs(1, 3, 4093, 12, 2, 256));
  EXPECT_DOUBLE_EQ(r.AttentionDecodeUs(1, 4096, 12, 2, 256, /*kv_longest=*/0, /*query_len=*/1),
                   r.DecodeLaunch(1, 4096, 12, 2, 256).Us());
}

TEST(DecodeKernels, FlashAttentionKeepsItsCalibratedModel) {
  // FA3 on the H100: one sequence over 128k tokens on 4 KV heads splits to fill the SMs
  // (33 x 4 = 132 programs), so it streams at the card's bandwidth.
  const HardwareSpec h100 = LoadHardware(HardwareCatalogDir(), "H100-SXM");
  const KernelRoofline r(h100, Dtype::kBfloat16);
  EXPECT_EQ(r.attention().decode.name, "flash_attn_3");
  const DecodeGridReport g = r.DecodeLaunch(1, 131072, 32, 4, 128);
  EXPECT_DOUBLE_EQ(g.programs, 132);
  const AnalyticConstants c;
  const double bytes = 131072 * 4 * 2 * 128 * 2.0;
  const double tiles = 4 * std::ceil(8.0 / 128);
  EXPECT_NEAR(g.Us(),
              (bytes / (3.35e12 * c.memory_efficiency) + c.attention_launch_s +
               tiles / 132 * c.attention_tile_s) *
                  1e6,
              1e-6);
}

}  // namespace
}  // namespace fleetsim
