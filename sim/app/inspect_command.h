// `fleetsim inspect`: the derived model and engine numbers for one model at one TP
// degree, as a vLLM start-up log would print them.
#pragma once

#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "app/inspect_report.h"
#include "engine/engine_config.h"

namespace fleetsim {

struct InspectOptions {
  std::string model = "qwen3.8-27b";
  EngineConfig engine;
  std::optional<int64_t> kv_cache_memory_bytes;
  std::optional<std::string> hardware;
  double gpu_memory_utilization = engine_settings::kGpuMemoryUtilization.Default();
  bool utilization_given = false;
  bool json = false;
  // Price one decode step after this many tokens (needs --hardware).
  std::optional<int64_t> decode_step_context;
  int64_t decode_step_batch = 1;
  // With it: the same decodes' attention beside a prefill chunk of this many tokens.
  std::optional<int64_t> decode_step_prefill_chunk;
  // vLLM's data_parallel_size and enable_expert_parallel (app/inspect_dp.h).
  int data_parallel_size = 1;
  bool enable_expert_parallel = false;
};

// Loads the model (and hardware), resolves the engine and lays out the cache; refusals
// are InputErrors that name the offending option.
InspectReport BuildInspectReport(const InspectOptions& options);

void AddInspectCommand(CLI::App& app);

}  // namespace fleetsim
