// The fused MoE's per-pair rows: those the analytic kernel streams (KernelRoofline::MoeUs)
// and those an expert-parallel rank runs for other ranks' experts
// (perf/expert_mask_cost.h), worked by hand for Qwen3-30B-A3B (hidden 2048, 128 experts of
// intermediate 768, top-8, bf16) on the RTX PRO 6000 Server Edition (1,597 GB/s x 0.977).
#include "perf/expert_mask_cost.h"

#include <gtest/gtest.h>

#include "core/project_paths.h"
#include "model/hardware.h"
#include "model/model_catalog.h"
#include "perf/analytic_kernels.h"

namespace fleetsim {
namespace {

class ExpertMaskCostTest : public ::testing::Test {
 protected:
  ModelCard qwen_ = ModelCatalog(ModelsDir()).Load("qwen3-30b-a3b");
  HardwareSpec pro6000_ = LoadHardware(HardwareCatalogDir(), "RTX-PRO-6000");
};

TEST_F(ExpertMaskCostTest, OtherRanksRowsThroughTheRowStagesAtTheStreamingRate) {
  const ExpertMaskCost dp2(qwen_, pro6000_, 1, 2);
  // Rows: 8 x (5 x 768 + 2 x 2048) = 63,488 elements a gathered token, of which the table
  // at gathered / 2 tokens carried half; tokens: (1 - 1/2) x (2048 + 128) = 1,088. Both
  // in bf16: (31,744 + 1,088) x 2 = 65,664 bytes.
  EXPECT_DOUBLE_EQ(dp2.BytesPerGatheredToken(), 65664);
  EXPECT_DOUBLE_EQ(dp2.StreamBytesPerSecond(), 1.597e12 * 0.977);
  // A full decode lock-step gathers 2 x 128 tokens: 256 x 65,664 B / 1,560.3 GB/s.
  EXPECT_NEAR(dp2.LayerUs(256), 256 * 65664 / (1.597e12 * 0.977) * 1e6, 1e-9);
  EXPECT_NEAR(dp2.LayerUs(256), 10.77, 0.01);
  EXPECT_DOUBLE_EQ(dp2.LayerUs(512), 2 * dp2.LayerUs(256));  // linear in the tokens
  EXPECT_EQ(dp2.LayerUs(0), 0);

  // Four ranks: three quarters of the rows are others'; the tokens of the three other
  // ranks: 8 x 7,936 x 3/4 + 3/4 x 2,176 = 49,248 elements.
  EXPECT_DOUBLE_EQ(ExpertMaskCost(qwen_, pro6000_, 1, 4).BytesPerGatheredToken(), 2 * 49248.0);
  // TP 2 inside each DP rank: the table's experts are half wide, so it carried 8/2 x (5 x
  // 384 + 2 x 2048) = 24,064 of a gathered token's 63,488 row elements.
  EXPECT_DOUBLE_EQ(ExpertMaskCost(qwen_, pro6000_, 2, 2).BytesPerGatheredToken(),
                   2 * (63488.0 - 24064 + 1088));
}

TEST_F(ExpertMaskCostTest, NothingWithoutDataParallelismOrExperts) {
  EXPECT_EQ(ExpertMaskCost(qwen_, pro6000_, 1, 1).LayerUs(256), 0);
  EXPECT_EQ(
      ExpertMaskCost(ModelCatalog(ModelsDir()).Load("llama-3.1-8b"), pro6000_, 1, 2).LayerUs(256),
      0);
  EXPECT_EQ(ExpertMaskCost().LayerUs(256), 0);
}

TEST_F(ExpertMaskCostTest, ACardWithoutAMeasuredStreamingRateUsesTheFittedOne) {
  const HardwareSpec h100 = LoadHardware(HardwareCatalogDir(), "H100-SXM");
  ASSERT_FALSE(h100.memory_stream_efficiency);
  EXPECT_NEAR(ExpertMaskCost(qwen_, h100, 1, 2).StreamBytesPerSecond() /
                  h100.memory_bandwidth_bytes_per_s.value,
              0.7966, 1e-4);
}

// Memory-bound shapes (16 tokens, all 128 experts' weights): a token-expert pair's rows
// cost (6 x inter + 2 x hidden) x 2 B at the streaming rate -- the first GEMM's 2 x inter
// written, the activation's 2 x inter read and inter written, the second GEMM's inter read
// and hidden written, moe_sum's hidden read.
TEST_F(ExpertMaskCostTest, TheAnalyticMoeStreamsEveryPairsRows) {
  const KernelRoofline roofline(pro6000_, Dtype::kBfloat16);
  const double stream = 1.597e12 * 0.977;
  const auto moe = [&](double top_k, double masked) {
    return roofline.MoeUs(16, 2048, 768, top_k, 128, 0, nullptr, masked);
  };
  EXPECT_NEAR(moe(8, 0) - moe(4, 0), 16 * 4 * (6 * 768 + 2 * 2048) * 2 / stream * 1e6, 1e-9);
  // A pair routed to another GPU's expert: zeros in both caches (2 x inter + hidden), then
  // the activation and moe_sum as for any row (3 x inter + hidden), no weights, no math.
  EXPECT_NEAR(moe(4, 4) - moe(4, 0), 16 * 4 * (5 * 768 + 2 * 2048) * 2 / stream * 1e6, 1e-9);
  // The same bytes an EP rank's mask cost charges a masked row: at DP 2, a gathered token's
  // other half of top-8 rows, besides its logits read and output written.
  EXPECT_DOUBLE_EQ(ExpertMaskCost::BytesPerGatheredToken(qwen_, 1, 2),
                   (4 * (5 * 768 + 2 * 2048) + 0.5 * (2048 + 128)) * 2);
}

}  // namespace
}  // namespace fleetsim
