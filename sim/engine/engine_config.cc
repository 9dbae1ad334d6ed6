#include "engine/engine_config.h"

#include "model/cache_shapes.h"
#include "model/weight_count.h"

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

// The weights' storage: the checkpoint's quantization_config, or the group's `quantization`
// (vLLM refuses a --quantization that contradicts the checkpoint's config). A layout vLLM
// would not load is refused here, before anything is sized.
Quantization ResolveQuantization(const ModelCard& card, const EngineConfig& config, int tp,
                                 const SettingError& error) {
  Quantization q = card.quantization.value_or(Quantization{});
  if (!q.unmodelled_method.empty()) {
    throw error("model", card.name + "'s quantization_config (" + q.file + ":" +
                             std::to_string(q.line) + ") uses quant_method " + q.unmodelled_method +
                             ", which fleetsim does not model (it reads awq, gptq, fp8, "
                             "compressed-tensors)");
  }
  if (config.quantization != kQuantization.Default()) {
    const std::optional<QuantMethod> method = ParseQuantMethod(config.quantization);
    if (!method) {
      throw error(kQuantization.key(), "unknown method '" + config.quantization +
                                           "' (accepted: auto, none, fp8, int8, awq, gptq)");
    }
    if (card.quantization && card.quantization->method != *method) {
      throw error(kQuantization.key(), std::string(NameOf(*method)) +
                                           " contradicts the checkpoint's quantization_config (" +
                                           std::string(NameOf(card.quantization->method)) + ", " +
                                           card.quantization->file + ":" +
                                           std::to_string(card.quantization->line) +
                                           "), as vLLM refuses it; leave quantization at auto");
    }
    if (!card.quantization) {
      kQuantizationGroupSize.Check(config.quantization_group_size, error);
      const int g = config.quantization_group_size;
      if ((*method == QuantMethod::kAwq || *method == QuantMethod::kGptq) && g != 0 && g != 32 &&
          g != 64 && g != 128) {
        throw error(kQuantizationGroupSize.key(),
                    std::to_string(g) + " has no vLLM 4-bit kernel (accepted: 0, 32, 64, 128)");
      }
      q = QuantizationForMethod(*method, g);
    }
  }
  if (const std::optional<std::string> refused = QuantizedLayoutViolation(card, tp, q)) {
    if (q.origin == "config.json") {
      throw error(kQuantization.key(), "the checkpoint's quantization_config (" + q.file + ":" +
                                           std::to_string(q.line) + ", " + q.Describe() +
                                           ") is a layout vLLM would not load: " + *refused);
    }
    throw error(kQuantization.key(),
                q.Describe() + " is a layout vLLM would not load: " + *refused);
  }
  return q;
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
  r.async_scheduling = config.async_scheduling;
  if (card.IsHybrid() && r.prefix_caching && !r.chunked_prefill) {
    throw error(kEnableChunkedPrefill.key(),
                "prefix caching on a hybrid model requires chunked prefill (vLLM's mamba "
                "'align' mode ends chunks on block boundaries); turn prefix caching off or "
                "chunked prefill on");
  }
  r.mamba_mode =
      card.IsHybrid() && r.prefix_caching ? MambaCacheMode::kAlign : MambaCacheMode::kNone;

  r.speculative = ResolveSpeculative(card, config.speculative_method, config.num_speculative_tokens,
                                     config.speculative_acceptance, error);
  r.num_spec = r.speculative.num_tokens;

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
  r.quantization = ResolveQuantization(card, config, r.tp, error);
  return r;
}

}  // namespace fleetsim
