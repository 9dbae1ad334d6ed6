#include "engine/engine_config.h"

#include "model/cache_shapes.h"

namespace fleetsim {
namespace {

using namespace engine_settings;

Dtype ResolveDtype(const std::string& requested, Dtype automatic,
                   const Setting<std::string_view>& setting, const SettingError& error) {
  if (requested == kAutoDtype) return automatic;
  std::optional<Dtype> dtype = ParseDtype(requested);
  if (!dtype) {
    throw error(setting.key(), "unknown dtype '" + requested +
                                   "' (accepted: auto, bfloat16, float16, float32, fp8)");
  }
  return *dtype;
}

}  // namespace

std::string_view NameOf(MambaCacheMode mode) {
  return mode == MambaCacheMode::kAlign ? "align" : "none";
}

ResolvedEngineConfig ResolveEngineConfig(const ModelCard& card, const EngineConfig& config,
                                         std::optional<int64_t> gpu_memory_bytes,
                                         const SettingError& error) {
  ResolvedEngineConfig r;
  r.requested = config;
  r.tp = config.tensor_parallel_size;
  kTensorParallelSize.Check(r.tp, error);
  if (auto violation = CheckTensorParallel(card, r.tp)) {
    throw error(kTensorParallelSize.key(),
                violation->message + " of " + card.name + " (field " + violation->field + ")");
  }
  for (LayerType type : card.DistinctLayerTypes()) {
    if (type == LayerType::kSlidingAttention) {
      throw error("model", card.name + " has sliding_attention layers, which are not modelled yet");
    }
  }
  if (card.attention.kv_lora_rank > 0) {
    throw error("model",
                card.name + " uses multi-head latent attention, which is not modelled yet");
  }

  r.prefix_caching_defaulted = !config.enable_prefix_caching.has_value();
  r.prefix_caching = config.enable_prefix_caching.value_or(!card.IsHybrid());
  r.chunked_prefill = config.enable_chunked_prefill;
  if (card.IsHybrid() && r.prefix_caching && !r.chunked_prefill) {
    throw error(kEnableChunkedPrefill.key(),
                "prefix caching on a hybrid model requires chunked prefill (vLLM's mamba "
                "'align' mode ends chunks on block boundaries); turn prefix caching off or "
                "chunked prefill on");
  }
  r.mamba_mode =
      card.IsHybrid() && r.prefix_caching ? MambaCacheMode::kAlign : MambaCacheMode::kNone;

  r.num_spec = config.num_speculative_tokens;
  kNumSpeculativeTokens.Check(r.num_spec, error);

  r.max_model_len = config.max_model_len.value_or(card.max_position_embeddings);
  kMaxModelLen.Check(r.max_model_len, error);
  if (r.max_model_len > card.max_position_embeddings) {
    throw error("max_model_len", std::to_string(r.max_model_len) + " exceeds the model's " +
                                     "max_position_embeddings (" +
                                     std::to_string(card.max_position_embeddings) + ")");
  }

  r.large_gpu_assumed = !gpu_memory_bytes.has_value();
  const bool large_gpu = gpu_memory_bytes.value_or(kLargeGpuBytes) >= kLargeGpuBytes;
  r.budget_defaulted = !config.max_num_batched_tokens.has_value();
  int budget = config.max_num_batched_tokens.value_or(large_gpu ? kLargeGpuMaxNumBatchedTokens
                                                                : kSmallGpuMaxNumBatchedTokens);
  kMaxNumBatchedTokens.Check(budget, error);
  if (!r.chunked_prefill) {
    // Without chunking a whole prompt must fit in one step (vLLM SchedulerConfig).
    if (!config.max_num_batched_tokens) {
      budget = static_cast<int>(std::max<int64_t>(budget, r.max_model_len));
    } else if (budget < r.max_model_len) {
      throw error(kMaxNumBatchedTokens.key(),
                  std::to_string(budget) + " is smaller than max_model_len (" +
                      std::to_string(r.max_model_len) +
                      ") with chunked prefill off, so long prompts could never run");
    }
  }
  r.max_num_batched_tokens = budget;
  r.max_num_seqs =
      config.max_num_seqs.value_or(large_gpu ? kLargeGpuMaxNumSeqs : kSmallGpuMaxNumSeqs);
  kMaxNumSeqs.Check(r.max_num_seqs, error);

  r.long_prefill_token_threshold = config.long_prefill_token_threshold;
  kLongPrefillTokenThreshold.Check(r.long_prefill_token_threshold, error);

  r.kv_dtype = ResolveDtype(config.kv_cache_dtype, card.dtype, kKvCacheDtype, error);
  r.conv_dtype = ResolveDtype(config.mamba_cache_dtype, card.dtype, kMambaCacheDtype, error);
  // `auto` for the recurrent state means the conv dtype -- except for Qwen3.5-family
  // configs, whose `mamba_ssm_dtype` decides (float32 for the published ones).
  Dtype ssm_auto = r.conv_dtype;
  if (card.SsmDtypeFollowsConfig() && card.config_ssm_dtype) ssm_auto = *card.config_ssm_dtype;
  r.ssm_dtype = ResolveDtype(config.mamba_ssm_cache_dtype, ssm_auto, kMambaSsmCacheDtype, error);
  return r;
}

}  // namespace fleetsim
