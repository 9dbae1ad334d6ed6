#include "app/inspect_command.h"

#include <iostream>
#include <memory>

#include "core/project_paths.h"
#include "engine/dp_setup.h"
#include "engine/engine_setup.h"
#include "model/hardware.h"
#include "model/model_catalog.h"

namespace fleetsim {
namespace {

using namespace engine_settings;

// Engine settings by their vLLM names -> the inspect option that sets them.
std::string OptionFor(std::string_view setting) {
  if (setting == kTensorParallelSize.key()) return "--tp";
  if (setting == kEnableChunkedPrefill.key()) return "--no-chunked-prefill";
  return OptionNameOf(setting);
}

InputError CommandLineError(std::string_view setting, const std::string& message) {
  return OptionError(OptionFor(setting), message);
}

}  // namespace

InspectReport BuildInspectReport(const InspectOptions& options) {
  if (options.kv_cache_memory_bytes && options.hardware) {
    throw OptionError("--kv-cache-memory-bytes",
                      "give either --kv-cache-memory-bytes or --hardware, not both");
  }
  if (options.utilization_given && !options.hardware) {
    throw OptionError("--gpu-memory-utilization", "needs --hardware to say which GPU");
  }
  kGpuMemoryUtilization.Check(options.gpu_memory_utilization, CommandLineError);
  if (options.kv_cache_memory_bytes)
    kKvCacheMemoryBytes.Check(*options.kv_cache_memory_bytes, CommandLineError);
  InspectReport report;
  report.card = ModelCatalog(ModelsDir()).Load(options.model);
  std::optional<HardwareSpec> hardware;
  if (options.hardware) hardware = LoadHardware(HardwareCatalogDir(), *options.hardware);

  std::optional<int64_t> gpu_memory;
  if (hardware) gpu_memory = hardware->UsableMemoryBytes();
  report.engine = ResolveEngineConfig(report.card, options.engine, gpu_memory, CommandLineError);
  report.layout = ResolveKvCacheLayout(report.card, report.engine, CommandLineError,
                                       hardware ? &*hardware : nullptr);
  if (hardware) report.hardware = hardware->name;

  if (options.kv_cache_memory_bytes) {
    KvMemory memory;
    memory.kv_cache_bytes = *options.kv_cache_memory_bytes;
    report.memory = memory;
  } else if (hardware) {
    KvMemory memory;
    memory.from_hardware = true;
    memory.hardware = hardware->name;
    memory.gpu_memory_bytes = *gpu_memory;
    memory.gpu_memory_utilization = options.gpu_memory_utilization;
    memory.weights = CountWeights(report.card, report.engine.tp, report.engine.quantization,
                                  report.engine.speculative.enabled());
    if (options.data_parallel_size > 1 && options.enable_expert_parallel) {
      // Each GPU holds 1 / DP of the experts a TP rank would (engine/dp_setup.h).
      const int64_t experts = ExpertWeightBytesPerTpRank(report.card, report.engine.tp);
      memory.weights.bytes_per_rank -= experts - experts / options.data_parallel_size;
    }
    const int64_t budget =
        KvBytesFromMemory(memory.gpu_memory_bytes, options.gpu_memory_utilization, 0);
    memory.kv_cache_bytes = budget - memory.weights.bytes_per_rank;
    if (memory.kv_cache_bytes <= 0) {
      KvBudget kv;
      kv.gpu_memory_utilization = options.gpu_memory_utilization;
      throw OptionError("--hardware", WeightsDoNotFit(*hardware, kv, report.engine.tp,
                                                      memory.weights.bytes_per_rank));
    }
    report.memory = memory;
  }
  if (options.data_parallel_size != 1 || options.enable_expert_parallel) {
    report.data_parallel =
        BuildDpReport(report.card, report.engine, options.data_parallel_size,
                      options.enable_expert_parallel, hardware ? &*hardware : nullptr);
  }
  if (report.memory) report.pool = SizePool(report.layout, report.memory->kv_cache_bytes);
  if (options.decode_step_context) {
    if (!hardware) throw OptionError("--decode-step", "needs --hardware to say which GPU");
    if (*options.decode_step_context < 0 || options.decode_step_batch < 1) {
      throw OptionError("--decode-step", "needs a context >= 0 and --decode-batch >= 1");
    }
    if (options.decode_step_prefill_chunk && *options.decode_step_prefill_chunk < 1) {
      throw OptionError("--prefill-chunk", "needs a chunk of at least 1 token");
    }
    report.decode_step = PriceDecodeStep(report.card, *hardware, report.engine, report.layout,
                                         *options.decode_step_context, options.decode_step_batch,
                                         options.decode_step_prefill_chunk);
  } else if (options.decode_step_prefill_chunk) {
    throw OptionError("--prefill-chunk",
                      "prices the --decode-step batch's attention beside a "
                      "chunk: give --decode-step too");
  }
  return report;
}

void AddInspectCommand(CLI::App& app) {
  auto options = std::make_shared<InspectOptions>();
  CLI::App* cmd = app.add_subcommand(
      "inspect",
      "Print the derived model and engine numbers (layer types, KV and GDN state bytes, "
      "resolved block size, cache groups, pool blocks, concurrency) as a vLLM log would");
  cmd->add_option("--model", options->model,
                  "Model card name under models/, or a path to a Hugging Face config.json")
      ->capture_default_str();
  cmd->add_option("--tp", options->engine.tensor_parallel_size,
                  std::string(kTensorParallelSize.spec.help))
      ->capture_default_str();
  auto prefix_caching = std::make_shared<bool>(false);
  CLI::Option* prefix =
      cmd->add_flag("--enable-prefix-caching,!--no-enable-prefix-caching", *prefix_caching,
                    "Prefix caching (default: on for dense, off for hybrid models)");
  CLI::Option* no_chunked =
      cmd->add_flag("--no-chunked-prefill")->description("Disable chunked prefill");
  // An engine setting as an option: its name and help from the declaration, and the
  // docs' default where it has no fixed value.
  const auto add = [cmd](const auto& setting, auto& field) {
    const SettingDoc doc = DocOf(setting);
    std::string help(setting.spec.help);
    if (!setting.fallback && doc.default_text != "--")
      help += " (default: " + doc.default_text + ")";
    CLI::Option* option = cmd->add_option(setting.spec.OptionName(), field, help);
    if (setting.fallback) option->capture_default_str();
  };
  add(kBlockSize, options->engine.block_size);
  add(kNumSpeculativeTokens, options->engine.num_speculative_tokens);
  add(kMaxModelLen, options->engine.max_model_len);
  add(kMaxNumBatchedTokens, options->engine.max_num_batched_tokens);
  add(kMaxNumSeqs, options->engine.max_num_seqs);
  add(kLongPrefillTokenThreshold, options->engine.long_prefill_token_threshold);
  add(kKvCacheDtype, options->engine.kv_cache_dtype);
  add(kMambaCacheDtype, options->engine.mamba_cache_dtype);
  add(kMambaSsmCacheDtype, options->engine.mamba_ssm_cache_dtype);
  add(kAttentionBackend, options->engine.attention_backend);
  add(kDecodeKernel, options->engine.decode_kernel);
  add(kQuantization, options->engine.quantization);
  add(kQuantizationGroupSize, options->engine.quantization_group_size);
  add(kKvCacheMemoryBytes, options->kv_cache_memory_bytes);
  cmd->add_option("--hardware", options->hardware,
                  "GPU from cluster_configs/hardware/ (or a YAML path); the KV memory is "
                  "memory x utilization minus the weights");
  auto* utilization =
      cmd->add_option(kGpuMemoryUtilization.spec.OptionName(), options->gpu_memory_utilization,
                      std::string(kGpuMemoryUtilization.spec.help) + " (with --hardware)")
          ->capture_default_str();
  cmd->add_option("--decode-step", options->decode_step_context,
                  "Also price one decode step after this many tokens of context, per kernel, "
                  "on the analytic kernel model (needs --hardware)");
  cmd->add_option("--decode-batch", options->decode_step_batch,
                  "Sequences in the --decode-step batch")
      ->capture_default_str();
  cmd->add_option("--prefill-chunk", options->decode_step_prefill_chunk,
                  "With --decode-step: also price the attention call of those decodes beside a "
                  "prefill chunk of this many tokens (a mixed step's one call: its tiles, and "
                  "FlashAttention 2's empty ones)");
  // --dp as the cluster config's and the sweeps' `dp`, beside vLLM's own name.
  cmd->add_option("--data-parallel-size,--dp", options->data_parallel_size,
                  "DP ranks of a MoE model with --enable-expert-parallel: the GPUs, expert "
                  "shards and per-step collectives")
      ->capture_default_str();
  cmd->add_flag("--enable-expert-parallel", options->enable_expert_parallel,
                "Shard the experts over DP x TP GPUs (vLLM's enable_expert_parallel)");
  cmd->add_flag("--json", options->json, "Print the same report as JSON");

  cmd->callback([options, prefix, prefix_caching, no_chunked, utilization]() {
    if (prefix->count() > 0) options->engine.enable_prefix_caching = *prefix_caching;
    options->engine.enable_chunked_prefill = no_chunked->count() == 0;
    options->utilization_given = utilization->count() > 0;
    const InspectReport report = BuildInspectReport(*options);
    if (options->json) {
      PrintInspectJson(report, std::cout);
    } else {
      PrintInspectText(report, std::cout);
    }
  });
}

}  // namespace fleetsim
