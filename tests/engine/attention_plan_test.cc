// The engine's attention plan: vLLM selects the backend before it aligns a hybrid's block
// size (the backend's smallest kernel block size is the alignment base), then the decode
// kernel for the resolved block; pins are refused naming the condition; and weights that
// do not fit a GPU are a refusal naming the shortfall, never a negative KV budget.
#include <string>

#include <gtest/gtest.h>

#include "core/format.h"
#include "core/project_paths.h"
#include "engine/engine_config.h"
#include "engine/engine_setup.h"
#include "engine/kv_cache_layout.h"
#include "model/hardware.h"
#include "model/model_catalog.h"
#include "model/weight_count.h"
#include "perf/layer_kernels.h"
#include "support/input_error.h"

namespace fleetsim {
namespace {

using testing::CatchInputError;
using testing::Mentions;

const SettingError kError = [](std::string_view setting, const std::string& message) {
  return InputError("", 0, std::string(setting), message);
};

ModelCard Card(const std::string& name) {
  return ModelCatalog(ModelsDir()).Load(name);
}

HardwareSpec Gpu(const std::string& name) {
  return LoadHardware(HardwareCatalogDir(), name);
}

KvCacheLayout Layout(const ModelCard& card, const HardwareSpec& gpu, EngineConfig config) {
  const ResolvedEngineConfig engine =
      ResolveEngineConfig(card, config, gpu.UsableMemoryBytes(), kError);
  return ResolveKvCacheLayout(card, engine, kError, &gpu);
}

TEST(AttentionPlan, TheHybridOnRdna3RunsTheTritonTwoDKernel) {
  EngineConfig config;
  config.tensor_parallel_size = 2;
  const KvCacheLayout l = Layout(Card("qwen3.8-27b-awq"), Gpu("RX-7900-XT"), config);
  ASSERT_TRUE(l.attention);
  EXPECT_EQ(l.block_size, 784);
  EXPECT_EQ(l.alignment_base, 16);
  EXPECT_EQ(l.attention->backend.name, "ROCM_ATTN");
  EXPECT_EQ(l.attention->decode.name, "triton_paged_attention_2d");
  EXPECT_EQ(l.attention->kernel_block_size, 784);
  EXPECT_EQ(l.attention->reported_processors, 42);
  // Dense Qwen3-8B at block 16: the custom HIP kernel.
  const KvCacheLayout dense = Layout(Card("qwen3-8b"), Gpu("RX-7900-XT"), config);
  EXPECT_EQ(dense.attention->decode.name, "rocm_paged_attention");
}

TEST(AttentionPlan, TheBackendsSmallestKernelBlockIsTheHybridAlignmentBase) {
  // The 27B at TP 1: mamba page 3,207,168 B, attention 4,096 B per token. With 16-token
  // kernel blocks: 16 x cdiv(3,207,168, 16 x 4,096) = 16 x 49 = 784. A backend whose
  // smallest kernel block were 32: 32 x cdiv(3,207,168, 32 x 4,096) = 32 x 25 = 800.
  HardwareSpec gpu = Gpu("H200-SXM");
  EXPECT_EQ(Layout(Card("qwen3.8-27b"), gpu, {}).block_size, 784);
  for (BackendSpec& backend : gpu.attention.backends)
    backend.kernel_block_sizes.values = {32};
  const KvCacheLayout l = Layout(Card("qwen3.8-27b"), gpu, {});
  EXPECT_EQ(l.alignment_base, 32);
  EXPECT_EQ(l.block_size, 800);
}

TEST(AttentionPlan, ImpossiblePinsAreRefusedNamingTheirSettingAndCondition) {
  EngineConfig config;
  config.tensor_parallel_size = 2;
  config.decode_kernel = "triton_paged_attention_2d_splitkv";
  EXPECT_EQ(Layout(Card("qwen3.8-27b-awq"), Gpu("RX-7900-XT"), config).attention->decode.grid,
            DecodeGrid::kSplitKvHeuristic);
  InputError e = CatchInputError([&] { Layout(Card("qwen3-8b"), Gpu("RX-7900-XT"), config); });
  EXPECT_EQ(e.field(), "decode_kernel");
  EXPECT_TRUE(Mentions(e, "head size 128 is not 256")) << e.what();

  config.decode_kernel = "auto";
  config.attention_backend = "FLASHINFER";
  e = CatchInputError([&] { Layout(Card("qwen3-8b"), Gpu("RX-7900-XT"), config); });
  EXPECT_EQ(e.field(), "attention_backend");
  // Without a GPU a pin cannot be checked.
  const ResolvedEngineConfig engine =
      ResolveEngineConfig(Card("qwen3-8b"), config, std::nullopt, kError);
  e = CatchInputError([&] { ResolveKvCacheLayout(Card("qwen3-8b"), engine, kError); });
  EXPECT_EQ(e.field(), "attention_backend");
}

TEST(AttentionPlan, EveryShippedModelOnEveryCatalogGpuNamesABackendAndDecodeKernel) {
  for (const std::string& model : ModelCatalog(ModelsDir()).Names()) {
    const ModelCard card = Card(model);
    for (const std::string& name : HardwareNames(HardwareCatalogDir())) {
      const HardwareSpec gpu = Gpu(name);
      for (int tp : {1, 2, 4, 8}) {
        if (tp > gpu.gpus_per_node.value || CheckTensorParallel(card, tp)) continue;
        SCOPED_TRACE(model + " on " + name + " TP " + std::to_string(tp));
        EngineConfig config;
        config.tensor_parallel_size = tp;
        const KvCacheLayout l = Layout(card, gpu, config);
        ASSERT_TRUE(l.attention);
        EXPECT_FALSE(l.attention->backend.name.empty());
        EXPECT_FALSE(l.attention->decode.name.empty());
        EXPECT_FALSE(l.attention->backend_why.empty());
        EXPECT_FALSE(l.attention->decode_why.empty());
        EXPECT_EQ(l.block_size % l.attention->kernel_block_size, 0);
      }
    }
  }
}

TEST(AttentionPlan, WeightsThatDoNotFitAreARefusalNamingTheShortfall) {
  // The 27B in bf16 on two RX 7900 XT: 27.6 GB per rank (text and vision towers) against
  // 19.98 GiB x 0.9 = 17.99 GiB. Quantized to 4 bits it fits with room for a KV cache.
  KvBudget budget;
  budget.hardware = Gpu("RX-7900-XT");
  const ModelCard card = Card("qwen3.8-27b");
  const int64_t weights = CountWeights(card, 2).bytes_per_rank;
  const int64_t usable = KvBytesFromMemory(budget.hardware->UsableMemoryBytes(), 0.9, 0);
  ASSERT_GT(weights, usable);
  const std::string message = WeightsDoNotFit(*budget.hardware, budget, 2, weights);
  EXPECT_NE(message.find("RX-7900-XT"), std::string::npos) << message;
  EXPECT_NE(
      message.find(Fixed(static_cast<double>(weights - usable) / (1 << 30), 2) + " GiB short"),
      std::string::npos)
      << message;
  EXPECT_LT(CountWeights(Card("qwen3.8-27b-awq"), 2).bytes_per_rank, usable / 2);
}

}  // namespace
}  // namespace fleetsim
