// vLLM's attention backend selection and decode dispatch, as the hardware catalog describes
// them: the priority order, each backend's rules, and the decode kernels in dispatch order.
// The expected choices follow from vLLM's source as the catalog cites it
// (use_rocm_custom_paged_attention, select_common_block_size, the platforms' priorities).
#include "model/attention_backend.h"

#include <string>

#include <gtest/gtest.h>

#include "core/project_paths.h"
#include "model/hardware.h"
#include "support/input_error.h"

namespace fleetsim {
namespace {

using testing::CatchInputError;
using testing::Mentions;

const SettingError kError = [](std::string_view setting, const std::string& message) {
  return InputError("", 0, std::string(setting), message);
};

AttentionCatalog Catalog(const std::string& gpu) {
  return LoadHardware(HardwareCatalogDir(), gpu).attention;
}

// The 27B hybrid at TP 2: 24 / 4 heads of 256 -> 12 query and 2 KV heads per rank.
AttentionQuery Hybrid27B() {
  AttentionQuery q;
  q.head_size = 256;
  q.q_heads_per_rank = 12;
  q.kv_heads_per_rank = 2;
  q.max_model_len = 262144;
  return q;
}

// Qwen3-8B at TP 2: 32 / 8 heads of 128 -> 16 and 4 per rank, GQA 4, 40,960 tokens.
AttentionQuery Qwen3_8B() {
  AttentionQuery q;
  q.head_size = 128;
  q.q_heads_per_rank = 16;
  q.kv_heads_per_rank = 4;
  q.max_model_len = 40960;
  return q;
}

TEST(AttentionBackend, TheHybridRunsTheTritonTwoDKernelOnRdna3) {
  const AttentionCatalog catalog = Catalog("RX-7900-XT");
  const BackendChoice backend = SelectAttentionBackend(catalog, Hybrid27B(), kError);
  EXPECT_EQ(backend.backend->name, "ROCM_ATTN");
  // ROCM_ATTN takes any multiple of 16: the 784-token block is its own kernel block, which
  // fails the custom kernel's gate four times over.
  const DecodeChoice decode = SelectDecodeKernel(*backend.backend, Hybrid27B(), 784, kError);
  EXPECT_EQ(decode.kernel_block_size, 784);
  EXPECT_EQ(decode.kernel->name, "triton_paged_attention_2d");
  for (const char* why : {"head size 256 is not 128", "kernel block size 784 is not 16",
                          "784 is not a power of two", "max_model_len 262144 exceeds 131072"})
    EXPECT_NE(decode.why.find(why), std::string::npos) << decode.why;
  // PR 45916's split-KV kernel is not in vLLM's gfx11 dispatch: only a pin runs it.
  EXPECT_NE(decode.kernel->name, "triton_paged_attention_2d_splitkv");
}

TEST(AttentionBackend, ADenseHeadSize128ModelTakesTheCustomKernelOnRdna3) {
  const AttentionCatalog catalog = Catalog("RX-7900-XT");
  const BackendChoice backend = SelectAttentionBackend(catalog, Qwen3_8B(), kError);
  const DecodeChoice decode = SelectDecodeKernel(*backend.backend, Qwen3_8B(), 16, kError);
  EXPECT_EQ(decode.kernel->name, "rocm_paged_attention");
  EXPECT_EQ(decode.kernel->grid, DecodeGrid::kPartitioned);
  EXPECT_EQ(decode.kernel->partition_tokens, 256);
  // An fp8 KV cache, or a 32-token block, loses it on gfx11 (kv_cache_dtype == auto and
  // block_size == 16 only there).
  AttentionQuery fp8 = Qwen3_8B();
  fp8.kv_cache_dtype = "fp8";
  EXPECT_EQ(SelectDecodeKernel(*backend.backend, fp8, 16, kError).kernel->name,
            "triton_paged_attention_2d");
  EXPECT_EQ(SelectDecodeKernel(*backend.backend, Qwen3_8B(), 32, kError).kernel->name,
            "triton_paged_attention_2d");
  // The same model at block 32 keeps it on gfx9 (MI300X: block 16 or 32).
  const AttentionCatalog mi300 = Catalog("MI300X");
  const BackendChoice rocm = SelectAttentionBackend(mi300, Qwen3_8B(), kError);
  EXPECT_EQ(SelectDecodeKernel(*rocm.backend, Qwen3_8B(), 32, kError).kernel->name,
            "rocm_paged_attention");
}

TEST(AttentionBackend, CudaGpusRunFlashAttentionByComputeCapability) {
  for (const auto& [gpu, kernel] :
       {std::pair{"H100-SXM", "flash_attn_3"}, std::pair{"H200-SXM", "flash_attn_3"},
        std::pair{"A100-SXM-80GB", "flash_attn_2"}, std::pair{"RTX-4090", "flash_attn_2"},
        std::pair{"RTX-PRO-6000", "flash_attn_2"}}) {
    const AttentionCatalog catalog = Catalog(gpu);
    const BackendChoice backend = SelectAttentionBackend(catalog, Hybrid27B(), kError);
    EXPECT_EQ(backend.backend->name, "FLASH_ATTN") << gpu;
    EXPECT_EQ(SelectDecodeKernel(*backend.backend, Hybrid27B(), 784, kError).kernel->name, kernel)
        << gpu;
  }
  // SM 10.x: FlashInfer first (its head sizes include 256).
  const AttentionCatalog b200 = Catalog("B200");
  EXPECT_EQ(SelectAttentionBackend(b200, Hybrid27B(), kError).backend->name, "FLASHINFER");
}

TEST(AttentionBackend, TheKernelBlockSizeIsTheLargestListedDivisorOfAnUnlistedBlock) {
  // vllm/v1/worker/utils.py select_common_block_size.
  const AttentionCatalog b200 = Catalog("B200");
  const BackendSpec& flashinfer = *b200.Find("FLASHINFER");
  EXPECT_EQ(flashinfer.KernelBlockSize(784), 16);  // 784 = 16 x 49: not 32 or 64
  EXPECT_EQ(flashinfer.KernelBlockSize(544), 32);  // 544 = 32 x 17
  EXPECT_EQ(flashinfer.KernelBlockSize(64), 64);
  EXPECT_FALSE(flashinfer.KernelBlockSize(24));
  EXPECT_EQ(Catalog("RX-7900-XT").Find("ROCM_ATTN")->KernelBlockSize(784), 784);
}

TEST(AttentionBackend, APinIsTakenWhenItCanRunAndRefusedNamingTheFailedCondition) {
  const AttentionCatalog catalog = Catalog("RX-7900-XT");
  AttentionQuery q = Hybrid27B();
  q.backend_pin = "TRITON_ATTN";
  const BackendChoice triton = SelectAttentionBackend(catalog, q, kError);
  EXPECT_EQ(triton.backend->name, "TRITON_ATTN");
  EXPECT_TRUE(triton.pinned);

  q.backend_pin = "FLASH_ATTN";
  InputError e = CatchInputError([&] { SelectAttentionBackend(catalog, q, kError); });
  EXPECT_EQ(e.field(), "attention_backend");
  EXPECT_TRUE(Mentions(e, "gfx1100")) << e.what();

  // FlashInfer on an H100 with an 80-wide head: its head sizes are 64, 128, 256.
  AttentionQuery odd = Hybrid27B();
  odd.head_size = 80;
  odd.backend_pin = "FLASHINFER";
  const AttentionCatalog h100 = Catalog("H100-SXM");
  e = CatchInputError([&] { SelectAttentionBackend(h100, odd, kError); });
  EXPECT_EQ(e.field(), "attention_backend");
  EXPECT_TRUE(Mentions(e, "head size 80")) << e.what();

  // The split-KV kernel pinned: it runs the hybrid (head 256), and refuses Qwen3-8B.
  const BackendSpec& rocm = *catalog.Find("ROCM_ATTN");
  AttentionQuery split = Hybrid27B();
  split.kernel_pin = "triton_paged_attention_2d_splitkv";
  const DecodeChoice pinned = SelectDecodeKernel(rocm, split, 784, kError);
  EXPECT_EQ(pinned.kernel->grid, DecodeGrid::kSplitKvHeuristic);
  EXPECT_TRUE(pinned.pinned);
  AttentionQuery dense = Qwen3_8B();
  dense.kernel_pin = "triton_paged_attention_2d_splitkv";
  e = CatchInputError([&] { SelectDecodeKernel(rocm, dense, 16, kError); });
  EXPECT_EQ(e.field(), "decode_kernel");
  EXPECT_TRUE(Mentions(e, "head size 128 is not 256")) << e.what();
  // The custom HIP kernel pinned for the hybrid: every failed condition named.
  split.kernel_pin = "rocm_paged_attention";
  e = CatchInputError([&] { SelectDecodeKernel(rocm, split, 784, kError); });
  EXPECT_TRUE(Mentions(e, "head size 256 is not 128")) << e.what();
  EXPECT_TRUE(Mentions(e, "not a power of two")) << e.what();
  split.kernel_pin = "flash_attn_3";
  e = CatchInputError([&] { SelectDecodeKernel(rocm, split, 784, kError); });
  EXPECT_TRUE(Mentions(e, "not a decode kernel of ROCM_ATTN")) << e.what();
}

TEST(AttentionBackend, NoBackendForAKvDtypeIsRefusedListingEach) {
  // FA2 on an A100 has no fp8 KV cache; FlashInfer and Triton do, so vLLM falls through.
  AttentionQuery q = Qwen3_8B();
  q.kv_cache_dtype = "fp8";
  const AttentionCatalog a100 = Catalog("A100-SXM-80GB");
  const BackendChoice choice = SelectAttentionBackend(a100, q, kError);
  EXPECT_EQ(choice.backend->name, "FLASHINFER");
  EXPECT_NE(choice.why.find("FLASH_ATTN: kv_cache_dtype fp8"), std::string::npos) << choice.why;
  q.kv_cache_dtype = "int4";
  const InputError e = CatchInputError([&] { SelectAttentionBackend(a100, q, kError); });
  EXPECT_TRUE(Mentions(e, "FLASH_ATTN:")) << e.what();
  EXPECT_TRUE(Mentions(e, "TRITON_ATTN:")) << e.what();
}

TEST(AttentionBackend, EveryCatalogGpuHasADefaultPlan) {
  for (const std::string& gpu : HardwareNames(HardwareCatalogDir())) {
    const AttentionPlan plan = DefaultAttentionPlan(Catalog(gpu));
    EXPECT_FALSE(plan.backend.name.empty()) << gpu;
    EXPECT_FALSE(plan.decode.name.empty()) << gpu;
    EXPECT_GT(plan.reported_processors, 0) << gpu;
  }
}

}  // namespace
}  // namespace fleetsim
