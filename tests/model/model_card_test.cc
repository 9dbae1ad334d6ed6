#include "model/model_card.h"

#include <map>

#include <gtest/gtest.h>

#include "core/input_error.h"
#include "core/project_paths.h"
#include "model/model_catalog.h"
#include "support/input_error.h"
#include "support/shared_data.h"
#include "support/temp_file.h"

namespace fleetsim {
namespace {

namespace fs = std::filesystem;
using testing::CatchInputError;
using testing::Mentions;
using testing::TempFile;

struct LayerCounts {
  int total, full, linear, sliding;
};

// Layer counts of every published config in ../shared/data/model_configs, as its data
// README states them (num_hidden_layers; hybrids: 3 linear per full layer).
const std::map<std::string, LayerCounts>& SharedConfigCounts() {
  static const std::map<std::string, LayerCounts> counts{
      {"Qwen--Qwen3-235B-A22B_config.json", {94, 94, 0, 0}},
      {"Qwen--Qwen3-30B-A3B_config.json", {48, 48, 0, 0}},
      {"Qwen--Qwen3-32B_config.json", {64, 64, 0, 0}},
      {"Qwen--Qwen3-8B_config.json", {36, 36, 0, 0}},
      {"Qwen--Qwen3-Next-80B-A3B-Thinking_config.json", {48, 12, 36, 0}},
      {"Qwen--Qwen3.5-27B_config.json", {64, 16, 48, 0}},
      {"Qwen--Qwen3.5-35B-A3B_config.json", {40, 10, 30, 0}},
      {"Qwen--Qwen3.5-397B-A17B_config.json", {60, 15, 45, 0}},
      {"deepseek-ai--DeepSeek-V3_config.json", {61, 61, 0, 0}},
      {"meta-llama--Meta-Llama-3.1-70B_config.json", {80, 80, 0, 0}},
      {"meta-llama--Meta-Llama-3.1-8B_config.json", {32, 32, 0, 0}},
      {"mistralai--Mixtral-8x7B-v0.1_config.json", {32, 32, 0, 0}},
      {"openai--gpt-oss-20b_config.json", {24, 12, 0, 12}},
  };
  return counts;
}

TEST(ModelCard, LoadsEverySharedConfigWithItsLayerCounts) {
  FLEETSIM_REQUIRE_SHARED_DATA();
  const fs::path dir = testing::SharedDataDir() / "model_configs";
  int loaded = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string file = entry.path().filename().string();
    SCOPED_TRACE(file);
    auto expected = SharedConfigCounts().find(file);
    ASSERT_NE(expected, SharedConfigCounts().end()) << "no expected layer counts for " << file;
    const ModelCard card = LoadModelCard(entry.path().string(), file);
    EXPECT_EQ(card.NumLayers(), expected->second.total);
    EXPECT_EQ(card.CountLayers(LayerType::kFullAttention), expected->second.full);
    EXPECT_EQ(card.CountLayers(LayerType::kLinearAttention), expected->second.linear);
    EXPECT_EQ(card.CountLayers(LayerType::kSlidingAttention), expected->second.sliding);
    ++loaded;
  }
  EXPECT_EQ(loaded, static_cast<int>(SharedConfigCounts().size()));
}

TEST(ModelCard, ReadsMoeFieldsOfEveryFamily) {
  FLEETSIM_REQUIRE_SHARED_DATA();
  const fs::path dir = testing::SharedDataDir() / "model_configs";
  const ModelCard deepseek =
      LoadModelCard((dir / "deepseek-ai--DeepSeek-V3_config.json").string(), "ds");
  ASSERT_TRUE(deepseek.moe);
  EXPECT_EQ(deepseek.moe->num_experts, 256);     // n_routed_experts
  EXPECT_EQ(deepseek.CountMoeLayers(), 61 - 3);  // first_k_dense_replace = 3
  EXPECT_EQ(deepseek.attention.kv_lora_rank, 512);
  const ModelCard mixtral =
      LoadModelCard((dir / "mistralai--Mixtral-8x7B-v0.1_config.json").string(), "mx");
  ASSERT_TRUE(mixtral.moe);
  EXPECT_EQ(mixtral.moe->num_experts, 8);              // num_local_experts
  EXPECT_EQ(mixtral.moe->expert_intermediate, 14336);  // no moe_intermediate_size
  const ModelCard next =
      LoadModelCard((dir / "Qwen--Qwen3-Next-80B-A3B-Thinking_config.json").string(), "n");
  ASSERT_TRUE(next.moe);
  EXPECT_EQ(next.moe->num_experts, 512);
  EXPECT_EQ(next.moe->shared_expert_intermediate, 512);
  EXPECT_EQ(next.CountMoeLayers(), 48);
}

TEST(ModelCard, SharedAndShippedHybridCardsAgree) {
  FLEETSIM_REQUIRE_SHARED_DATA();
  const ModelCard published = LoadModelCard(
      (testing::SharedDataDir() / "model_configs" / "Qwen--Qwen3.5-27B_config.json").string(), "p");
  const ModelCard ours = ModelCatalog(ModelsDir()).Load("qwen3.8-27b");
  EXPECT_EQ(ours.layers, published.layers);
  EXPECT_EQ(ours.hidden_size, published.hidden_size);
  EXPECT_EQ(ours.intermediate_size, published.intermediate_size);
  EXPECT_EQ(ours.linear->ConvDim(), published.linear->ConvDim());
  EXPECT_EQ(ours.architecture, published.architecture);
  EXPECT_EQ(ours.config_ssm_dtype, published.config_ssm_dtype);
}

TEST(ModelCard, ShippedHybridCardHasTheQwen35Dimensions) {
  const ModelCard card = ModelCatalog(ModelsDir()).Load("qwen3.8-27b");
  EXPECT_EQ(card.architecture, "Qwen3_5ForConditionalGeneration");
  EXPECT_EQ(card.NumLayers(), 64);
  for (int i = 0; i < 64; ++i) {
    EXPECT_EQ(card.layers[static_cast<std::size_t>(i)],
              i % 4 == 3 ? LayerType::kFullAttention : LayerType::kLinearAttention);
  }
  EXPECT_EQ(card.hidden_size, 5120);
  EXPECT_EQ(card.intermediate_size, 17408);
  EXPECT_EQ(card.attention.num_q_heads, 24);
  EXPECT_EQ(card.attention.num_kv_heads, 4);
  EXPECT_EQ(card.attention.head_dim, 256);
  EXPECT_TRUE(card.attention.output_gate);
  ASSERT_TRUE(card.linear);
  EXPECT_EQ(card.linear->num_k_heads, 16);
  EXPECT_EQ(card.linear->num_v_heads, 48);
  EXPECT_EQ(card.linear->k_head_dim, 128);
  EXPECT_EQ(card.linear->v_head_dim, 128);
  EXPECT_EQ(card.linear->conv_kernel, 4);
  EXPECT_EQ(card.vocab_size, 248320);
  EXPECT_EQ(card.dtype, Dtype::kBfloat16);
  EXPECT_EQ(card.config_ssm_dtype, Dtype::kFloat32);
  EXPECT_TRUE(card.SsmDtypeFollowsConfig());
  EXPECT_TRUE(card.vision);
}

TEST(ModelCard, EveryShippedCardLoads) {
  const ModelCatalog catalog(ModelsDir());
  const std::vector<std::string> expected{"llama-3.1-70b",   "llama-3.1-8b", "qwen3-30b-a3b",
                                          "qwen3-32b",       "qwen3-8b",     "qwen3-next-80b-a3b",
                                          "qwen3.5-35b-a3b", "qwen3.8-27b",  "qwen3.8-27b-awq"};
  EXPECT_EQ(catalog.Names(), expected);
  for (const std::string& name : catalog.Names()) {
    SCOPED_TRACE(name);
    const ModelCard card = catalog.Load(name);
    EXPECT_GT(card.NumLayers(), 0);
    EXPECT_EQ(card.moe.has_value(), name.find("a3b") != std::string::npos);
    EXPECT_EQ(card.IsHybrid(), name == "qwen3-next-80b-a3b" || name.rfind("qwen3.", 0) == 0);
  }
}

TEST(ModelCard, DerivesLayerTypesFromTheFullAttentionInterval) {
  // Qwen3-Next publishes no layer_types: layer i is full attention iff (i+1) % 4 == 0.
  const ModelCard card = ModelCatalog(ModelsDir()).Load("qwen3-next-80b-a3b");
  EXPECT_EQ(card.CountLayers(LayerType::kFullAttention), 12);
  EXPECT_EQ(card.CountLayers(LayerType::kLinearAttention), 36);
  EXPECT_EQ(card.layers[3], LayerType::kFullAttention);
  EXPECT_EQ(card.layers[4], LayerType::kLinearAttention);
  EXPECT_FALSE(card.SsmDtypeFollowsConfig());
}

TEST(ModelCard, ProfilingDepthReachesEveryBlockType) {
  const ModelCatalog catalog(ModelsDir());
  EXPECT_EQ(catalog.Load("qwen3.8-27b").ProfilingDepth(), 4);
  EXPECT_EQ(catalog.Load("qwen3-next-80b-a3b").ProfilingDepth(), 4);
  EXPECT_EQ(catalog.Load("llama-3.1-8b").ProfilingDepth(), 1);
  EXPECT_EQ(catalog.Load("qwen3-30b-a3b").ProfilingDepth(), 1);
}

TEST(ModelCard, UnknownModelListsTheKnownOnes) {
  const InputError e = CatchInputError([] { ModelCatalog(ModelsDir()).Load("gpt-5"); });
  EXPECT_EQ(e.field(), "--model");
  EXPECT_TRUE(Mentions(e, "qwen3.8-27b"));
  EXPECT_TRUE(Mentions(e, "llama-3.1-8b"));
}

InputError LoadError(const std::string& json) {
  TempFile file("config.json", json);
  return CatchInputError([&] { LoadModelCard(file.path(), "bad"); });
}

TEST(ModelCard, BadConfigsNameTheFieldAndLine) {
  const std::string base =
      "{\n \"num_hidden_layers\": 4,\n \"hidden_size\": 64,\n \"num_attention_heads\": 4,\n"
      " \"vocab_size\": 100,\n \"max_position_embeddings\": 128,\n \"intermediate_size\": 128";
  InputError short_list = LoadError(base + ",\n \"layer_types\": [\"full_attention\"]\n}\n");
  EXPECT_EQ(short_list.field(), "layer_types");
  EXPECT_EQ(short_list.line(), 8);

  InputError unknown_type = LoadError(base +
                                      ",\n \"layer_types\": [\"full_attention\", "
                                      "\"full_attention\", \"x\", \"full_attention\"]\n}\n");
  EXPECT_EQ(unknown_type.field(), "layer_types[2]");

  InputError missing_linear = LoadError(base + ",\n \"full_attention_interval\": 2\n}\n");
  EXPECT_EQ(missing_linear.field(), "linear_num_value_heads");

  InputError bad_hidden =
      LoadError("{\n \"num_hidden_layers\": 4,\n \"hidden_size\": \"wide\"\n}\n");
  EXPECT_EQ(bad_hidden.field(), "hidden_size");
  EXPECT_EQ(bad_hidden.line(), 3);

  InputError text_config = LoadError("{\n \"text_config\": {\n  \"hidden_size\": 64\n }\n}\n");
  EXPECT_EQ(text_config.field(), "text_config.vocab_size");
}

// Issue 22: config.json was read leniently -- YAML's 0x10 as 16, +1, 01, NaN, and the
// first of two equal keys winning silently.
TEST(ModelCard, ConfigJsonIsStrict) {
  for (const char* bad : {"0x10", "+1", "010", "NaN"}) {
    SCOPED_TRACE(bad);
    const InputError e =
        LoadError(std::string("{\n \"num_hidden_layers\": 4,\n \"hidden_size\": ") + bad + "\n}\n");
    EXPECT_EQ(e.field(), "hidden_size") << e.what();
    EXPECT_EQ(e.line(), 3) << e.what();
  }
  const InputError twice =
      LoadError("{\n \"num_hidden_layers\": 4,\n \"num_hidden_layers\": 8\n}\n");
  EXPECT_EQ(twice.field(), "num_hidden_layers") << twice.what();
  EXPECT_EQ(twice.line(), 3) << twice.what();
  EXPECT_TRUE(Mentions(twice, "duplicate key")) << twice.what();
}

}  // namespace
// Found by fuzz_short: a hidden_size of 440,960,096 overflowed the weight count's int64
// sums (undefined behaviour). Such a card is refused at load, in one located line; the
// largest real card, and every shipped one (above), still loads.
TEST(ModelCard, SizesWhoseWeightsOverflow64BitsAreRefused) {
  const std::string rest =
      " \"num_attention_heads\": 32,\n \"num_key_value_heads\": 8,\n"
      " \"vocab_size\": 128256,\n \"max_position_embeddings\": 131072,\n"
      " \"intermediate_size\": 14336\n}\n";
  const InputError wide = LoadError(
      "{\n \"num_hidden_layers\": 32,\n \"hidden_size\": "
      "440960096,\n" +
      rest);
  EXPECT_EQ(wide.line(), 1) << wide.what();
  EXPECT_TRUE(Mentions(wide, "cannot be counted in 64 bits")) << wide.what();
  EXPECT_TRUE(Mentions(wide, "hidden_size 440960096")) << wide.what();
  // 8B's shape at 4096 wide loads; so does 128 times its width, whose count is large but
  // fits.
  for (const char* hidden : {"4096", "524288"}) {
    TempFile file("config.json", std::string("{\n \"num_hidden_layers\": 32,\n \"hidden_size\": ") +
                                     hidden + ",\n" + rest);
    EXPECT_NO_THROW(LoadModelCard(file.path(), "wide")) << hidden;
  }
}

// A layer count past any real model's is refused before anything is sized by it (2e9
// layers used to take the loader minutes and gigabytes building per-layer tables).
TEST(ModelCard, LayerCountsPastAnyRealModelAreRefused) {
  const std::string rest =
      " \"hidden_size\": 4096,\n \"num_attention_heads\": 32,\n \"num_key_value_heads\": 8,\n"
      " \"vocab_size\": 128256,\n \"max_position_embeddings\": 131072,\n"
      " \"intermediate_size\": 14336\n}\n";
  const InputError deep = LoadError("{\n \"num_hidden_layers\": 2000000000,\n" + rest);
  EXPECT_EQ(deep.line(), 2) << deep.what();
  EXPECT_EQ(deep.field(), "num_hidden_layers");
  EXPECT_TRUE(Mentions(deep, "at most 4096")) << deep.what();
  const InputError mtp =
      LoadError("{\n \"num_hidden_layers\": 32,\n \"mtp_num_hidden_layers\": 5000,\n" + rest);
  EXPECT_EQ(mtp.field(), "mtp_num_hidden_layers") << mtp.what();
  // The bound itself loads.
  TempFile file("config.json", "{\n \"num_hidden_layers\": 4096,\n" + rest);
  EXPECT_EQ(LoadModelCard(file.path(), "deep").layers.size(), 4096u);
}

}  // namespace fleetsim
