#include "app/inspect_command.h"

#include <iostream>
#include <memory>

#include "core/project_paths.h"
#include "model/hardware.h"
#include "model/model_catalog.h"

namespace fleetsim {
namespace {

// Engine settings by their vLLM names -> the inspect option that sets them.
std::string OptionFor(std::string_view setting) {
  if (setting == "tensor_parallel_size") return "--tp";
  if (setting == "enable_chunked_prefill") return "--no-chunked-prefill";
  if (setting == "enable_prefix_caching") return "--enable-prefix-caching";
  if (setting == "model") return "--model";
  std::string option = "--" + std::string(setting);
  for (char& c : option)
    c = c == '_' ? '-' : c;
  return option;
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
  if (options.gpu_memory_utilization <= 0 || options.gpu_memory_utilization > 1) {
    throw OptionError("--gpu-memory-utilization", "must be in (0, 1]");
  }
  InspectReport report;
  report.card = ModelCatalog(ModelsDir()).Load(options.model);
  std::optional<HardwareSpec> hardware;
  if (options.hardware) hardware = LoadHardware(HardwareCatalogDir(), *options.hardware);

  std::optional<int64_t> gpu_memory;
  if (hardware) gpu_memory = hardware->UsableMemoryBytes();
  report.engine = ResolveEngineConfig(report.card, options.engine, gpu_memory, CommandLineError);
  report.layout = ResolveKvCacheLayout(report.card, report.engine, CommandLineError);

  if (options.kv_cache_memory_bytes) {
    if (*options.kv_cache_memory_bytes <= 0) {
      throw OptionError("--kv-cache-memory-bytes", "must be positive");
    }
    KvMemory memory;
    memory.kv_cache_bytes = *options.kv_cache_memory_bytes;
    report.memory = memory;
  } else if (hardware) {
    KvMemory memory;
    memory.from_hardware = true;
    memory.hardware = hardware->name;
    memory.gpu_memory_bytes = *gpu_memory;
    memory.gpu_memory_utilization = options.gpu_memory_utilization;
    memory.weights = CountWeights(report.card, report.engine.tp);
    const auto budget = static_cast<int64_t>(static_cast<double>(memory.gpu_memory_bytes) *
                                             options.gpu_memory_utilization);
    memory.kv_cache_bytes = budget - memory.weights.bytes_per_rank;
    if (memory.kv_cache_bytes <= 0) {
      throw OptionError("--hardware",
                        "the weights per rank (" + std::to_string(memory.weights.bytes_per_rank) +
                            " B) do not fit in " + hardware->name + " x utilization (" +
                            std::to_string(budget) + " B); raise --tp");
    }
    report.memory = memory;
  }
  if (report.memory) report.pool = SizePool(report.layout, report.memory->kv_cache_bytes);
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
  cmd->add_option("--tp", options->engine.tensor_parallel_size, "Tensor-parallel degree")
      ->capture_default_str();
  auto prefix_caching = std::make_shared<bool>(false);
  CLI::Option* prefix =
      cmd->add_flag("--enable-prefix-caching,!--no-enable-prefix-caching", *prefix_caching,
                    "Prefix caching (default: on for dense, off for hybrid models)");
  CLI::Option* no_chunked =
      cmd->add_flag("--no-chunked-prefill")->description("Disable chunked prefill");
  cmd->add_option("--block-size", options->engine.block_size,
                  "Requested KV block size in tokens (hybrids may override it; default 16)");
  cmd->add_option("--num-speculative-tokens", options->engine.num_speculative_tokens,
                  "Speculative tokens per step (widens the GDN conv state)")
      ->capture_default_str();
  cmd->add_option("--max-model-len", options->engine.max_model_len,
                  "Longest request in tokens (default: max_position_embeddings)");
  cmd->add_option("--max-num-batched-tokens", options->engine.max_num_batched_tokens,
                  "Token budget per step (default 8192 on >= 70 GiB GPUs, else 2048)");
  cmd->add_option("--max-num-seqs", options->engine.max_num_seqs,
                  "Running requests at most (default 1024 on >= 70 GiB GPUs, else 256)");
  cmd->add_option("--long-prefill-token-threshold", options->engine.long_prefill_token_threshold,
                  "Cap on one request's prefill tokens per step (0: off)")
      ->capture_default_str();
  cmd->add_option("--kv-cache-dtype", options->engine.kv_cache_dtype,
                  "auto (model dtype), bfloat16, float16, fp8")
      ->capture_default_str();
  cmd->add_option("--mamba-cache-dtype", options->engine.mamba_cache_dtype,
                  "GDN conv-state dtype: auto (model dtype), bfloat16, float16, float32")
      ->capture_default_str();
  cmd->add_option("--mamba-ssm-cache-dtype", options->engine.mamba_ssm_cache_dtype,
                  "GDN recurrent-state dtype: auto (the conv dtype; Qwen3.5 configs: "
                  "mamba_ssm_dtype), bfloat16, float16, float32")
      ->capture_default_str();
  cmd->add_option("--kv-cache-memory-bytes", options->kv_cache_memory_bytes,
                  "KV-cache memory per rank in bytes (as vLLM's option)");
  cmd->add_option("--hardware", options->hardware,
                  "GPU from cluster_configs/hardware/ (or a YAML path); the KV memory is "
                  "memory x utilization minus the weights");
  auto* utilization = cmd->add_option("--gpu-memory-utilization", options->gpu_memory_utilization,
                                      "Fraction of GPU memory vLLM may use (with --hardware)")
                          ->capture_default_str();
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
