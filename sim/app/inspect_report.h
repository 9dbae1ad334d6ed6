// What `fleetsim inspect` reports: the model and engine numbers a vLLM start-up log
// would print, computed once and rendered as text or JSON.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

#include "app/inspect_attention.h"
#include "app/inspect_dp.h"
#include "engine/engine_config.h"
#include "engine/kv_cache_layout.h"
#include "model/model_card.h"
#include "model/weight_count.h"

namespace fleetsim {

// Where the KV-cache memory figure came from.
struct KvMemory {
  int64_t kv_cache_bytes = 0;
  bool from_hardware = false;  // else --kv-cache-memory-bytes
  std::string hardware;
  int64_t gpu_memory_bytes = 0;
  double gpu_memory_utilization = 0;
  WeightCount weights;
};

struct InspectReport {
  ModelCard card;
  ResolvedEngineConfig engine;
  KvCacheLayout layout;  // layout.attention: the backend and decode kernel, with --hardware
  std::string hardware;  // the GPU's catalog name, with --hardware
  std::optional<KvMemory> memory;
  std::optional<PoolCapacity> pool;
  std::optional<DecodeStepReport> decode_step;  // --decode-step
  std::optional<DpReport> data_parallel;        // --data-parallel-size > 1
};

void PrintInspectText(const InspectReport& report, std::ostream& out);
void PrintInspectJson(const InspectReport& report, std::ostream& out);

}  // namespace fleetsim
