// The vLLM engine settings of one serving instance, as a user gives them, and the values
// the engine resolves from them (defaults, dtypes, mamba cache mode), with vLLM's refusals.
//
// Defaults follow ENGINE_SEMANTICS.md section 4: on GPUs with >= 70 GiB,
// max_num_batched_tokens 8192 and max_num_seqs 1024 (otherwise 2048 and 256); chunked
// prefill on; prefix caching on for dense models and off for hybrid ones.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/input_error.h"
#include "core/setting.h"
#include "engine/engine_settings.h"
#include "engine/speculative.h"
#include "model/dtype.h"
#include "model/model_card.h"
#include "model/quantization.h"

namespace fleetsim {

// Each field is the engine setting of its name (engine_settings.h: default, range, help).
struct EngineConfig {
  int tensor_parallel_size = engine_settings::kTensorParallelSize.Default();
  std::optional<int> block_size;
  std::optional<bool> enable_prefix_caching;
  bool enable_chunked_prefill = engine_settings::kEnableChunkedPrefill.Default();
  bool async_scheduling = engine_settings::kAsyncScheduling.Default();
  // speculative_config (engine/speculative.h): 0 tokens is off.
  int num_speculative_tokens = engine_settings::kNumSpeculativeTokens.Default();
  std::string speculative_method{engine_settings::kSpeculativeMethod.Default()};
  std::optional<std::vector<double>> speculative_acceptance;
  std::optional<int64_t> max_model_len;
  std::optional<int> max_num_batched_tokens;
  std::optional<int> max_num_seqs;
  int long_prefill_token_threshold = engine_settings::kLongPrefillTokenThreshold.Default();
  std::string kv_cache_dtype{engine_settings::kKvCacheDtype.Default()};
  std::string mamba_cache_dtype{engine_settings::kMambaCacheDtype.Default()};
  std::string mamba_ssm_cache_dtype{engine_settings::kMambaSsmCacheDtype.Default()};
  std::string attention_backend{engine_settings::kAttentionBackend.Default()};
  std::string decode_kernel{engine_settings::kDecodeKernel.Default()};
  std::string quantization{engine_settings::kQuantization.Default()};
  int quantization_group_size = engine_settings::kQuantizationGroupSize.Default();
};

// How hybrid GDN state is cached: "none" keeps one state per sequence (prefix caching
// off); "align" keeps checkpoints at block boundaries (prefix caching on). vLLM's third
// mode, "all", is not modelled.
enum class MambaCacheMode { kNone, kAlign };
std::string_view NameOf(MambaCacheMode mode);

struct ResolvedEngineConfig {
  EngineConfig requested;
  int tp = 1;
  bool prefix_caching = false;
  bool prefix_caching_defaulted = false;
  bool chunked_prefill = true;
  bool async_scheduling = engine_settings::kAsyncScheduling.Default();
  int num_spec = 0;  // speculative.num_tokens
  SpeculativeDecoding speculative;
  int64_t max_model_len = 0;
  int max_num_batched_tokens = 0;
  int max_num_seqs = 0;
  bool budget_defaulted = false;   // the token budget and max_num_seqs came from defaults
  bool large_gpu_assumed = false;  // defaults chosen without knowing the GPU's memory
  int long_prefill_token_threshold = 0;
  Dtype kv_dtype = Dtype::kBfloat16;
  Dtype conv_dtype = Dtype::kBfloat16;
  Dtype ssm_dtype = Dtype::kBfloat16;
  MambaCacheMode mamba_mode = MambaCacheMode::kNone;
  // The weights' storage: the checkpoint's quantization_config, or the group's setting.
  Quantization quantization;
};

// Resolves defaults and applies every check that does not need the block size.
// `gpu_memory_bytes` picks the default budgets; without it a >= 70 GiB GPU is assumed.
ResolvedEngineConfig ResolveEngineConfig(const ModelCard& card, const EngineConfig& config,
                                         std::optional<int64_t> gpu_memory_bytes,
                                         const SettingError& error);

}  // namespace fleetsim
