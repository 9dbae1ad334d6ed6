// vLLM's engine settings, each declared once: name (vLLM's, which cluster configs and
// run metadata use; command lines spell it with '-'), type, default, range, unit and help.
// `ResolveEngineConfig` and `BuildEngineSetup` apply the ranges; the cluster config,
// `inspect`, `validate`, sweeps and the analytic bundle builder read the names and the
// defaults from here, and docs/CLUSTER_CONFIG.md's engine table is checked against
// `EngineSectionSettings()` by a test.
//
// Defaults follow ENGINE_SEMANTICS.md section 4 (vLLM's arg_utils.py): the batch limits
// depend on the GPU's memory, prefix caching on the model, the block size on the cache
// layout, so those have no fixed value here and resolve in ResolveEngineConfig.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "core/setting.h"

namespace fleetsim::engine_settings {

// The dtype settings' "as the model (or the conv state)" value.
inline constexpr std::string_view kAutoDtype = "auto";

using R = SettingRange;
using T = SettingType;

inline constexpr Setting<int> kTensorParallelSize{
    {"tensor_parallel_size", T::kInteger, R::AtLeast(1), "GPUs", "", "Tensor-parallel degree"}, 1};
// vLLM's default batch limits switch at 70 GiB of device memory (arg_utils.py,
// get_batch_defaults); the two settings' default_text below says the same.
inline constexpr int64_t kLargeGpuBytes = 70LL << 30;
inline constexpr int kLargeGpuMaxNumSeqs = 1024;
inline constexpr int kSmallGpuMaxNumSeqs = 256;
inline constexpr int kLargeGpuMaxNumBatchedTokens = 8192;
inline constexpr int kSmallGpuMaxNumBatchedTokens = 2048;

inline constexpr Setting<int> kMaxNumSeqs{{"max_num_seqs", T::kInteger, R::AtLeast(1), "requests",
                                           "1024 on GPUs >= 70 GiB, else 256",
                                           "Running sequences at most"}};
inline constexpr Setting<int> kMaxNumBatchedTokens{
    {"max_num_batched_tokens", T::kInteger, R::AtLeast(1), "tokens",
     "8192 on GPUs >= 70 GiB, else 2048", "Tokens per step at most"}};
inline constexpr Setting<int64_t> kMaxModelLen{{"max_model_len", T::kInteger, R::AtLeast(1),
                                                "tokens", "the model's position limit",
                                                "Longest sequence (prompt + output) in tokens"}};
inline constexpr Setting<bool> kEnablePrefixCaching{{"enable_prefix_caching", T::kBool, R::Any(),
                                                     "", "on for dense models, off for hybrid ones",
                                                     "Prefix (block-hash) caching"}};
inline constexpr Setting<bool> kEnableChunkedPrefill{
    {"enable_chunked_prefill", T::kBool, R::Any(), "", "",
     "Chunked prefill (a hybrid with prefix caching requires it)"},
    true};
inline constexpr Setting<int> kBlockSize{
    {"block_size", T::kInteger, R::AtLeast(1), "tokens",
     "resolved: 16 for attention-only models, aligned to the GDN state page for hybrid ones "
     "(e.g. 784)",
     "Requested KV block size in tokens (hybrids may raise it)"}};
// vLLM's async scheduling (on by default in vLLM 0.19 unless the speculative method or the
// executor cannot run it, config/vllm.py; every setting modelled here can): the next step
// is scheduled while the current one runs, so an arrival or a finish during a step is seen
// one step later (engine/instance.h).
inline constexpr Setting<bool> kAsyncScheduling{
    {"async_scheduling", T::kBool, R::Any(), "", "",
     "Schedule the next step while the current one runs (vLLM's default)"},
    true};
// Speculative decoding (vLLM's speculative_config; engine/speculative.h): a mapping under
// `engine:` whose keys are the three below. Absent: no speculation.
inline constexpr SettingSpec kSpeculativeConfig{
    "speculative_config",
    T::kMapping,
    R::Any(),
    "",
    "-- (off)",
    "vLLM's speculative_config: MTP speculative decoding (keys below)"};
inline constexpr Setting<std::string_view> kSpeculativeMethod{
    {"method", T::kString, R::Any(), "", "",
     "Drafting method: mtp (the model's own multi-token-prediction layers)"},
    "mtp"};
// Required in speculative_config; the inspect command line's default, 0, is off.
inline constexpr Setting<int> kNumSpeculativeTokens{
    {"num_speculative_tokens", T::kInteger, R::AtLeast(1), "tokens", "required",
     "MTP draft tokens per step (widens the GDN conv state and state slots; 0: off)"},
    0};
inline constexpr SettingSpec kSpeculativeAcceptance{
    "acceptance",
    T::kList,
    R::Any(),
    "",
    "vLLM PR 48892's MTP per-position rates (first k of 8)",
    "Per-position acceptance rates, one per draft position, each in [0, 1], non-increasing"};
inline constexpr Setting<int> kLongPrefillTokenThreshold{
    {"long_prefill_token_threshold", T::kInteger, R::NonNegative(), "tokens", "0 (off)",
     "Cap on one request's prefill tokens per step (0: off)", "(0 turns it off)"},
    0};
inline constexpr Setting<std::string_view> kKvCacheDtype{
    {"kv_cache_dtype", T::kString, R::Any(), "", "auto (the model's dtype)",
     "auto (model dtype), bfloat16, float16, float32, fp8"},
    kAutoDtype};
inline constexpr Setting<std::string_view> kMambaCacheDtype{
    {"mamba_cache_dtype", T::kString, R::Any(), "", "",
     "GDN conv-state dtype: auto (model dtype), bfloat16, float16, float32"},
    kAutoDtype};
inline constexpr Setting<std::string_view> kMambaSsmCacheDtype{
    {"mamba_ssm_cache_dtype", T::kString, R::Any(), "",
     "auto (follows the conv dtype unless the model card says otherwise)",
     "GDN recurrent-state dtype: auto (the conv dtype; Qwen3.5 configs: mamba_ssm_dtype), "
     "bfloat16, float16, float32"},
    kAutoDtype};
// The attention backend (vLLM's --attention-backend / VLLM_ATTENTION_BACKEND): `auto` takes
// vLLM's priority order on the GPU (hardware catalog, `attention_backend.priority`), first
// valid; a name pins it, and a pin the model cannot run on is refused naming the condition.
inline constexpr Setting<std::string_view> kAttentionBackend{
    {"attention_backend", T::kString, R::Any(), "", "auto (vLLM's order on the GPU)",
     "Attention backend: auto, or a backend of the GPU's catalog entry (FLASH_ATTN, ROCM_ATTN, "
     "...)"},
    "auto"};
// The decode kernel inside the backend: `auto` is vLLM's dispatch; a name pins one of the
// backend's decode kernels, e.g. triton_paged_attention_2d_splitkv (vLLM PR 45916, a build
// carrying it) on an RDNA3 card, and is refused where its conditions fail.
inline constexpr Setting<std::string_view> kDecodeKernel{
    {"decode_kernel", T::kString, R::Any(), "", "auto (vLLM's dispatch)",
     "Decode kernel: auto, or one of the backend's decode kernels in the hardware catalog"},
    "auto"};
// Quantized weights (vLLM's --quantization): `auto` takes the checkpoint's
// quantization_config (none without one); a method quantizes the group's weights as that
// checkpoint would be.
inline constexpr Setting<std::string_view> kQuantization{
    {"quantization", T::kString, R::Any(), "", "auto (the checkpoint's quantization_config)",
     "Weight quantization: auto, none, fp8, int8 (W8A8), awq, gptq (4-bit W4A16)"},
    "auto"};
inline constexpr Setting<int> kQuantizationGroupSize{
    {"quantization_group_size", T::kInteger, R::NonNegative(), "inputs", "128",
     "Inputs per scale of 4-bit weights set by `quantization` (32, 64, 128; 0: per channel)"},
    128};
inline constexpr Setting<double> kGpuMemoryUtilization{
    {"gpu_memory_utilization", T::kNumber, R::UnitInterval(), "fraction", "",
     "Fraction of GPU memory vLLM may use; KV budget = memory x this - weights per rank"},
    0.9};
inline constexpr Setting<int64_t> kKvCacheMemoryBytes{
    {"kv_cache_memory_bytes", T::kInteger, R::Positive(), "bytes", "--",
     "KV-cache memory per rank in bytes (as vLLM's option), instead of the utilization"}};
inline constexpr Setting<int64_t> kNumGpuBlocks{
    {"num_gpu_blocks", T::kInteger, R::AtLeast(2), "blocks", "--",
     "The pool size in blocks, as a vLLM log reports it; wins over both of the above"}};
// Fixed host-side cost of one engine step (scheduling, input preparation, sampling
// bookkeeping, output processing), charged on top of the bundle's kernels. One value for
// every run; see docs/VALIDATION.md for how it was chosen.
inline constexpr Setting<double> kStepOverheadUs{
    {"step_overhead_us", T::kNumber, R::NonNegative(), "us", "",
     "Host-side cost added to every engine step, in microseconds"},
    0.0};

// The keys of a cluster config's `engine:` mapping, in the docs' order.
const std::vector<SettingDoc>& EngineSectionSettings();
// The keys of its `speculative_config:` mapping.
const std::vector<SettingDoc>& SpeculativeConfigSettings();

}  // namespace fleetsim::engine_settings
