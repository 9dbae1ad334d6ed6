#include "model/weight_count.h"

#include <gtest/gtest.h>

#include "core/project_paths.h"
#include "model/model_catalog.h"

namespace fleetsim {
namespace {

ModelCard Load(const std::string& name) {
  return ModelCatalog(ModelsDir()).Load(name);
}

TEST(WeightCount, MatchesPublishedParameterCounts) {
  // Parameter totals of the published checkpoints (safetensors metadata).
  EXPECT_EQ(CountWeights(Load("llama-3.1-8b"), 1).text_params, 8'030'261'248);
  EXPECT_EQ(CountWeights(Load("llama-3.1-70b"), 1).text_params, 70'553'706'496);
  EXPECT_EQ(CountWeights(Load("qwen3-8b"), 1).text_params, 8'190'735'360);
  EXPECT_EQ(CountWeights(Load("qwen3-32b"), 1).text_params, 32'762'123'264);
  EXPECT_EQ(CountWeights(Load("qwen3-30b-a3b"), 1).text_params, 30'532'122'624);
}

TEST(WeightCount, BytesAtTp1AreParamsTimesDtype) {
  const WeightCount w = CountWeights(Load("llama-3.1-8b"), 1);
  EXPECT_EQ(w.text_params_per_rank, w.text_params);
  EXPECT_EQ(w.bytes_per_rank, w.text_params * 2);
  EXPECT_EQ(w.vision_params, 0);
}

TEST(WeightCount, TpSplitsShardedWeightsAndKeepsReplicatedOnes) {
  const ModelCard card = Load("llama-3.1-8b");
  const WeightCount tp1 = CountWeights(card, 1);
  const WeightCount tp2 = CountWeights(card, 2);
  // Norms (2 per layer + final, 4096 each) stay whole on every rank.
  const int64_t norms = (2 * 32 + 1) * 4096;
  EXPECT_EQ(tp2.text_params_per_rank, (tp1.text_params - norms) / 2 + norms);
  EXPECT_EQ(tp2.text_params, tp1.text_params);
}

TEST(WeightCount, ReplicatedKvHeadsCostEveryRankAWholeHead) {
  const ModelCard card = Load("llama-3.1-8b");  // 8 KV heads of 128
  const WeightCount tp8 = CountWeights(card, 8);
  const WeightCount tp16 = CountWeights(card, 16);
  // From TP 8 to 16 everything sharded halves -- except K and V, where each rank keeps
  // one whole head per layer (32 layers x 4096 x (128 + 128)).
  const int64_t kv_per_rank = 32LL * 4096 * 256;
  const int64_t norms = (2 * 32 + 1) * 4096;
  EXPECT_EQ(tp16.text_params_per_rank,
            (tp8.text_params_per_rank - kv_per_rank - norms) / 2 + kv_per_rank + norms);
  EXPECT_EQ(tp16.text_params, tp8.text_params);
}

TEST(WeightCount, MultimodalCardsCountTheVisionTower) {
  const WeightCount w = CountWeights(Load("qwen3.8-27b"), 1);
  EXPECT_GT(w.vision_params, 400'000'000);
  EXPECT_LT(w.vision_params, 500'000'000);
  // The 27B text tower: about 27 billion parameters without the MTP head.
  EXPECT_GT(w.text_params, 26'500'000'000);
  EXPECT_LT(w.text_params, 27'500'000'000);
  EXPECT_EQ(w.bytes_per_rank, (w.text_params + w.vision_params) * 2);
}

}  // namespace
}  // namespace fleetsim
