// Everything one simulated engine needs, built from a model card, a bundle, engine
// settings and a KV budget: the resolved engine, the cache layout, the pool size and the
// step-cost model. Shared by `run` and `validate`.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "engine/engine_config.h"
#include "engine/instance.h"
#include "engine/kv_cache_layout.h"
#include "model/hardware.h"
#include "model/model_card.h"
#include "perf/bundle.h"
#include "perf/step_cost.h"

namespace fleetsim {

// Where an engine's KV cache comes from, as vLLM sizes it (engine_settings.h has the
// settings' ranges; BuildEngineSetup applies them).
struct KvBudget {
  std::optional<int64_t> num_blocks;      // as a vLLM log reports num_gpu_blocks
  std::optional<int64_t> kv_cache_bytes;  // or bytes per rank
  std::optional<HardwareSpec> hardware;   // or memory x utilization - weights
  double gpu_memory_utilization = engine_settings::kGpuMemoryUtilization.Default();
};

// vLLM's KV budget from the device: memory x utilization - the weights on one rank.
int64_t KvBytesFromMemory(int64_t gpu_memory_bytes, double gpu_memory_utilization,
                          int64_t weight_bytes_per_rank);

// The refusal for weights that leave no room at all: the group's GPU, its usable memory,
// the weights per rank and the shortfall (never a negative KV budget).
std::string WeightsDoNotFit(const HardwareSpec& hardware, const KvBudget& budget, int tp,
                            int64_t weight_bytes_per_rank);

// The step overhead setting in the simulation's integer nanoseconds.
int64_t StepOverheadNs(double step_overhead_us);

struct EngineSetup {
  ModelCard card;
  Bundle bundle;
  ResolvedEngineConfig engine;
  KvCacheLayout layout;
  int64_t num_blocks = 0;
  SchedulerConfig scheduler;
  std::unique_ptr<StepCostModel> cost;

  std::unique_ptr<Instance> MakeInstance() const;
};

EngineSetup BuildEngineSetup(ModelCard card, Bundle bundle, const EngineConfig& config,
                             const KvBudget& budget, int64_t step_overhead_ns,
                             const SettingError& error);

}  // namespace fleetsim
