// Quantized weights: reading a config's quantization_config, the bytes a layout stores,
// and the layouts vLLM would not load. Expected values are worked out from the 27B card's
// shapes by hand (comments), not read back from the code.
#include "model/quantization.h"

#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "core/project_paths.h"
#include "model/model_catalog.h"
#include "model/weight_count.h"
#include "support/input_error.h"
#include "support/temp_file.h"

namespace fleetsim {
namespace {

using testing::CatchInputError;
using testing::Mentions;
using testing::TempFile;

ModelCard Load(const std::string& name) {
  return ModelCatalog(ModelsDir()).Load(name);
}

TEST(Quantization, TheAwqCardReadsItsQuantizationConfig) {
  const ModelCard card = Load("qwen3.8-27b-awq");
  ASSERT_TRUE(card.quantization);
  const Quantization& q = *card.quantization;
  EXPECT_EQ(q.method, QuantMethod::kAwq);
  EXPECT_EQ(q.weight_bits, 4);
  EXPECT_EQ(q.group_size, 128);
  EXPECT_TRUE(q.zero_point);
  EXPECT_FALSE(q.activations);
  EXPECT_EQ(q.origin, "config.json");
  EXPECT_GT(q.line, 0);
  // modules_to_not_convert: substrings of the checkpoint names.
  EXPECT_FALSE(q.Quantizes("model.layers.0.linear_attn.in_proj_ba"));
  EXPECT_FALSE(q.Quantizes("visual.blocks.3.attn.qkv"));
  EXPECT_TRUE(q.Quantizes("model.layers.0.linear_attn.in_proj_qkvz"));
  EXPECT_TRUE(q.Quantizes("model.layers.63.mlp.down_proj"));
  // 4-bit weights, and per 128 inputs one fp16 scale and one 4-bit zero point.
  EXPECT_DOUBLE_EQ(q.BytesPerWeight(), 0.5 + 2.5 / 128);
  EXPECT_FALSE(Load("qwen3.8-27b").quantization);
}

TEST(Quantization, TheAwqTwentySevenBStoresItsProjectionsInFourBits) {
  // Quantized, whole model: 16 attention layers x (qkv 5120 x (24 x 256 x 2 + 4 x 512) +
  // o 6144 x 5120) + 48 GDN layers x (in_proj_qkvz 5120 x 16384 + out_proj 6144 x 5120)
  // + 64 MLPs x 3 x 5120 x 17408 = 1,677,721,600 + 5,536,481,280 + 17,112,760,320
  // = 24,326,963,200, half of it per rank at TP 2. in_proj_ba and the vision tower are
  // listed as not converted.
  const ModelCard awq = Load("qwen3.8-27b-awq");
  const WeightCount w = CountWeights(awq, 2);
  EXPECT_EQ(w.quantized_params_per_rank, 12'163'481'600);
  const int64_t plain = w.text_params_per_rank + w.vision_params_per_rank - 12'163'481'600;
  EXPECT_EQ(w.bytes_per_rank,
            plain * 2 + static_cast<int64_t>(std::ceil(12'163'481'600.0 * (0.5 + 2.5 / 128))));
  // The same parameters as the bf16 card; the bytes about a third.
  const WeightCount bf16 = CountWeights(Load("qwen3.8-27b"), 2);
  EXPECT_EQ(w.text_params, bf16.text_params);
  EXPECT_EQ(bf16.quantized_params_per_rank, 0);
  EXPECT_LT(w.bytes_per_rank, bf16.bytes_per_rank / 2);
}

TEST(Quantization, AFourBitInProjBaIsALayoutVllmWouldNotLoad) {
  const ModelCard card = Load("qwen3.8-27b");
  Quantization q = QuantizationForMethod(QuantMethod::kAwq, 128);
  EXPECT_FALSE(QuantizedLayoutViolation(card, 2, q));  // leaves in_proj_ba, as quantizers do
  q.not_converted = {"visual"};
  const auto refused = QuantizedLayoutViolation(card, 2, q);
  ASSERT_TRUE(refused);
  EXPECT_NE(refused->find("in_proj_ba"), std::string::npos) << *refused;
  // FP8 is not a packed layout: accepted there (the seed's "fp8 acceptance").
  Quantization fp8 = QuantizationForMethod(QuantMethod::kFp8, 0);
  EXPECT_FALSE(QuantizedLayoutViolation(card, 2, fp8));
}

TEST(Quantization, RowParallelInputsMustBeWholeGroupsPerRank) {
  // Qwen3-8B's down_proj has 12,288 inputs: 1,536 per rank at TP 8, 12 groups of 128. A
  // made-up 12,320-wide MLP has 1,540 per rank at TP 8: 12 groups and 4 inputs over.
  ModelCard card = Load("qwen3-8b");
  card.intermediate_size = 12320;
  const auto refused =
      QuantizedLayoutViolation(card, 8, QuantizationForMethod(QuantMethod::kGptq, 128));
  ASSERT_TRUE(refused);
  EXPECT_NE(refused->find("mlp.down_proj"), std::string::npos) << *refused;
  EXPECT_NE(refused->find("1540"), std::string::npos) << *refused;
  EXPECT_FALSE(QuantizedLayoutViolation(Load("qwen3-8b"), 8,
                                        QuantizationForMethod(QuantMethod::kGptq, 128)));
}

TEST(Quantization, ConfigSpellingsOfEveryMethodAreRead) {
  const auto read = [](const std::string& json) {
    TempFile file("config.json", json);
    return ReadQuantizationConfig(LoadYamlFile(file.path()));
  };
  const auto gptq = read(
      R"({"quantization_config": {"quant_method": "gptq", "bits": 4, "group_size": 64,
          "sym": true, "dynamic": {"-:.*in_proj_ba": {}}}})");
  ASSERT_TRUE(gptq);
  EXPECT_EQ(gptq->method, QuantMethod::kGptq);
  EXPECT_EQ(gptq->group_size, 64);
  EXPECT_FALSE(gptq->zero_point);
  EXPECT_FALSE(gptq->Quantizes("model.layers.0.linear_attn.in_proj_ba"));
  EXPECT_TRUE(gptq->Quantizes("model.layers.0.mlp.down_proj"));
  const auto fp8 = read(R"({"quantization_config": {"quant_method": "fp8",
      "activation_scheme": "dynamic", "ignored_layers": ["lm_head"]}})");
  ASSERT_TRUE(fp8);
  EXPECT_EQ(fp8->method, QuantMethod::kFp8);
  EXPECT_TRUE(fp8->activations);
  EXPECT_DOUBLE_EQ(fp8->BytesPerWeight(), 1);
  const auto w8a8 = read(R"({"quantization_config": {"quant_method": "compressed-tensors",
      "config_groups": {"group_0": {"weights": {"num_bits": 8, "type": "int"},
      "input_activations": {"num_bits": 8, "type": "int"}, "targets": ["Linear"]}},
      "ignore": ["re:.*visual.*"]}})");
  ASSERT_TRUE(w8a8);
  EXPECT_EQ(w8a8->method, QuantMethod::kInt8);
  EXPECT_TRUE(w8a8->activations);
  EXPECT_FALSE(w8a8->Quantizes("visual.blocks.0.attn.qkv"));
  const auto none = read(R"({"hidden_size": 8})");
  EXPECT_FALSE(none);
  const auto mxfp4 = read(R"({"quantization_config": {"quant_method": "mxfp4"}})");
  ASSERT_TRUE(mxfp4);
  EXPECT_EQ(mxfp4->unmodelled_method, "mxfp4");
}

TEST(Quantization, BitsAndGroupSizesWithoutAKernelAreRefusedWithTheirField) {
  for (const auto& [json, field] :
       {std::pair<std::string, std::string>{
            R"({"quantization_config": {"quant_method": "awq", "bits": 3, "group_size": 128}})",
            "quantization_config.bits"},
        std::pair<std::string, std::string>{
            R"({"quantization_config": {"quant_method": "awq", "bits": 4, "group_size": 100}})",
            "quantization_config.group_size"}}) {
    TempFile file("config.json", json);
    const InputError e =
        CatchInputError([&] { ReadQuantizationConfig(LoadYamlFile(file.path())); });
    EXPECT_EQ(e.field(), field) << e.what();
    EXPECT_EQ(e.line(), 1);
  }
}

}  // namespace
}  // namespace fleetsim
