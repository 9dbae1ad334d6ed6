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

// Fixed host-side cost of one engine step (scheduling, input preparation, sampling
// bookkeeping, output processing), charged on top of the bundle's kernels. One value for
// every run; see docs/VALIDATION.md for how it was chosen.
inline constexpr int64_t kDefaultStepOverheadNs = 0;

struct KvBudget {
  std::optional<int64_t> num_blocks;      // as a vLLM log reports num_gpu_blocks
  std::optional<int64_t> kv_cache_bytes;  // or bytes per rank
  std::optional<HardwareSpec> hardware;   // or memory x utilization - weights
  double gpu_memory_utilization = 0.9;
};

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
