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

TEST(WeightCount, MtpModuleIsCountedOnlyWhenLoaded) {
  // Qwen3.5's MTP module for qwen3.8-27b (config.json: hidden 5,120, 24 query heads and 4
  // KV heads of 256 with an output gate, intermediate 17,408, mtp_num_hidden_layers 1;
  // qwen3_5_mtp.py), embed_tokens and lm_head shared with the target:
  //   fc          2 x 5,120 x 5,120                         =  52,428,800  (split by TP)
  //   qkv_proj    5,120 x (24 x 256 x 2 + 4 x (256 + 256))  =  73,400,320  (split)
  //   o_proj      24 x 256 x 5,120                          =  31,457,280  (split)
  //   gate_up     2 x 5,120 x 17,408                        = 178,257,920  (split)
  //   down        17,408 x 5,120                            =  89,128,960  (split)
  //   q/k norms   2 x 256                                   =         512  (replicated)
  //   norms       (2 in the layer + pre_fc x 2 + norm) x 5,120 = 25,600    (replicated)
  // split 424,673,280 + replicated 26,112 = 424,699,392 parameters, bf16.
  const ModelCard card = Load("qwen3.8-27b");
  const Quantization none;
  const WeightCount off = CountWeights(card, 1, none);
  const WeightCount tp1 = CountWeights(card, 1, none, true);
  EXPECT_EQ(off.mtp_params_per_rank, 0);
  EXPECT_EQ(tp1.mtp_params, 424'699'392);
  EXPECT_EQ(tp1.mtp_params_per_rank, 424'699'392);
  EXPECT_EQ(tp1.mtp_bytes_per_rank, 849'398'784);
  EXPECT_EQ(tp1.bytes_per_rank - off.bytes_per_rank, 849'398'784);
  EXPECT_EQ(tp1.text_params_per_rank, off.text_params_per_rank);
  // TP 2: 2 KV heads per rank (K/V not replicated): 424,673,280 / 2 + 26,112 = 212,362,752.
  const WeightCount tp2 = CountWeights(card, 2, none, true);
  EXPECT_EQ(tp2.mtp_params_per_rank, 212'362'752);
  EXPECT_EQ(tp2.mtp_bytes_per_rank, 424'725'504);
  EXPECT_EQ(tp2.bytes_per_rank - CountWeights(card, 2, none).bytes_per_rank, 424'725'504);
}

TEST(WeightCount, TheAwqCheckpointLeavesItsMtpModuleInBf16) {
  // Its quantization_config lists "mtp" in modules_to_not_convert: the module weighs what
  // the bf16 one does (424,725,504 B per rank at TP 2) and adds nothing quantized.
  const ModelCard awq = Load("qwen3.8-27b-awq");
  const WeightCount off = CountWeights(awq, 2, *awq.quantization);
  const WeightCount on = CountWeights(awq, 2, *awq.quantization, true);
  EXPECT_EQ(on.mtp_bytes_per_rank, 424'725'504);
  EXPECT_EQ(on.bytes_per_rank - off.bytes_per_rank, 424'725'504);
  EXPECT_EQ(on.quantized_params_per_rank, off.quantized_params_per_rank);
  // A group that quantizes a bf16 checkpoint (engine setting `quantization: fp8`) quantizes
  // the MTP module's linear layers too, as vLLM passes its quant_config to them: fc, qkv,
  // o, gate_up and down at 1 byte, the 26,112 norm weights at 2 (TP 1).
  const WeightCount fp8 =
      CountWeights(Load("qwen3.8-27b"), 1, QuantizationForMethod(QuantMethod::kFp8, 0), true);
  EXPECT_EQ(fp8.mtp_bytes_per_rank, 424'673'280 + 2 * 26'112);
}

}  // namespace
}  // namespace fleetsim
