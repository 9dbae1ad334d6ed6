#include "engine/engine_config.h"

#include <gtest/gtest.h>

#include "engine/test_models.h"

namespace fleetsim {
namespace {

using testing::Card;
using testing::Resolve;

InputError ResolveError(const std::string& model, const EngineConfig& config) {
  return testing::CatchInputError([&] { Resolve(Card(model), config); });
}

TEST(EngineConfig, PrefixCachingDefaultsOnForDenseOffForHybrid) {
  EXPECT_TRUE(Resolve(Card("llama-3.1-8b"), {}).prefix_caching);
  EXPECT_FALSE(Resolve(Card("qwen3.8-27b"), {}).prefix_caching);
  EXPECT_EQ(Resolve(Card("qwen3.8-27b"), {}).mamba_mode, MambaCacheMode::kNone);
  EngineConfig on;
  on.enable_prefix_caching = true;
  EXPECT_EQ(Resolve(Card("qwen3.8-27b"), on).mamba_mode, MambaCacheMode::kAlign);
  // A dense model has no mamba state, so prefix caching never makes it "align".
  EXPECT_EQ(Resolve(Card("llama-3.1-8b"), on).mamba_mode, MambaCacheMode::kNone);
}

TEST(EngineConfig, BudgetsDependOnGpuMemory) {
  const ResolvedEngineConfig large = Resolve(Card("llama-3.1-8b"), {}, 80LL << 30);
  EXPECT_EQ(large.max_num_batched_tokens, 8192);
  EXPECT_EQ(large.max_num_seqs, 1024);
  const ResolvedEngineConfig small = Resolve(Card("llama-3.1-8b"), {}, 24LL << 30);
  EXPECT_EQ(small.max_num_batched_tokens, 2048);
  EXPECT_EQ(small.max_num_seqs, 256);
  const ResolvedEngineConfig unknown = Resolve(Card("llama-3.1-8b"), {});
  EXPECT_TRUE(unknown.large_gpu_assumed);
  EXPECT_EQ(unknown.max_num_batched_tokens, 8192);
}

TEST(EngineConfig, MaxModelLenDefaultsToThePositionLimitAndIsCapped) {
  EXPECT_EQ(Resolve(Card("qwen3.8-27b"), {}).max_model_len, 262144);
  EngineConfig config;
  config.max_model_len = 300000;
  EXPECT_EQ(ResolveError("qwen3.8-27b", config).field(), "max_model_len");
}

TEST(EngineConfig, SsmDtypeFollowsTheQwen35ConfigOnly) {
  EXPECT_EQ(Resolve(Card("qwen3.8-27b"), {}).ssm_dtype, Dtype::kFloat32);
  EXPECT_EQ(Resolve(Card("qwen3.5-35b-a3b"), {}).ssm_dtype, Dtype::kFloat32);
  EXPECT_EQ(Resolve(Card("qwen3-next-80b-a3b"), {}).ssm_dtype, Dtype::kBfloat16);
  EngineConfig conv32;
  conv32.mamba_cache_dtype = "float32";  // `auto` ssm follows the conv dtype
  EXPECT_EQ(Resolve(Card("qwen3-next-80b-a3b"), conv32).ssm_dtype, Dtype::kFloat32);
}

TEST(EngineConfig, RefusesPrefixCachingOnAHybridWithoutChunkedPrefill) {
  EngineConfig config;
  config.enable_prefix_caching = true;
  config.enable_chunked_prefill = false;
  EXPECT_EQ(ResolveError("qwen3.8-27b", config).field(), "enable_chunked_prefill");
  // Prefix caching off, or a dense model: allowed.
  config.enable_prefix_caching = false;
  EXPECT_NO_THROW(Resolve(Card("qwen3.8-27b"), config));
  config.enable_prefix_caching = true;
  EXPECT_NO_THROW(Resolve(Card("llama-3.1-8b"), config));
}

TEST(EngineConfig, WithoutChunkedPrefillAWholePromptMustFitTheBudget) {
  EngineConfig config;
  config.enable_chunked_prefill = false;
  config.max_model_len = 32768;
  EXPECT_EQ(Resolve(Card("llama-3.1-8b"), config).max_num_batched_tokens, 32768);
  config.max_num_batched_tokens = 8192;
  EXPECT_EQ(ResolveError("llama-3.1-8b", config).field(), "max_num_batched_tokens");
}

TEST(EngineConfig, RefusesTpThatDoesNotDivideTheHeads) {
  EngineConfig config;
  config.tensor_parallel_size = 3;
  const InputError e = ResolveError("qwen3.8-27b", config);
  EXPECT_EQ(e.field(), "tensor_parallel_size");
  EXPECT_TRUE(testing::Mentions(e, "num_key_value_heads"));
}

TEST(EngineConfig, RefusesModelsItDoesNotModelYet) {
  ModelCard sliding = Card("llama-3.1-8b");
  sliding.layers[0] = LayerType::kSlidingAttention;
  EXPECT_THROW(Resolve(sliding, {}), InputError);
  ModelCard mla = Card("llama-3.1-8b");
  mla.attention.kv_lora_rank = 512;
  EXPECT_THROW(Resolve(mla, {}), InputError);
}

TEST(EngineConfig, RefusesBadValues) {
  EngineConfig config;
  config.kv_cache_dtype = "int3";
  EXPECT_EQ(ResolveError("llama-3.1-8b", config).field(), "kv_cache_dtype");
  config = {};
  config.num_speculative_tokens = -1;
  EXPECT_EQ(ResolveError("llama-3.1-8b", config).field(), "num_speculative_tokens");
  config = {};
  config.max_num_seqs = 0;
  EXPECT_EQ(ResolveError("llama-3.1-8b", config).field(), "max_num_seqs");
}

}  // namespace
}  // namespace fleetsim
