#include "engine/engine_setup.h"

#include <cmath>
#include <utility>

#include "core/format.h"
#include "model/weight_count.h"

namespace fleetsim {

using namespace engine_settings;

int64_t KvBytesFromMemory(int64_t gpu_memory_bytes, double gpu_memory_utilization,
                          int64_t weight_bytes_per_rank) {
  return static_cast<int64_t>(static_cast<double>(gpu_memory_bytes) * gpu_memory_utilization) -
         weight_bytes_per_rank;
}

int64_t StepOverheadNs(double step_overhead_us) {
  return static_cast<int64_t>(std::llround(step_overhead_us * 1000));
}

std::string WeightsDoNotFit(const HardwareSpec& hardware, const KvBudget& budget, int tp,
                            int64_t weight_bytes_per_rank) {
  const int64_t usable =
      KvBytesFromMemory(hardware.UsableMemoryBytes(), budget.gpu_memory_utilization, 0);
  const auto gib = [](int64_t bytes) { return Fixed(static_cast<double>(bytes) / (1 << 30), 2); };
  return "the weights per rank (" + gib(weight_bytes_per_rank) + " GiB at TP " +
         std::to_string(tp) + ") do not fit " + hardware.name + "'s " +
         gib(hardware.UsableMemoryBytes()) + " GiB x gpu_memory_utilization " +
         Fixed(budget.gpu_memory_utilization, 2) + " = " + gib(usable) +
         " GiB: " + gib(weight_bytes_per_rank - usable) +
         " GiB short, before any KV cache; raise tp, quantize the weights (quantization), or "
         "raise gpu_memory_utilization";
}

std::unique_ptr<Instance> EngineSetup::MakeInstance() const {
  return std::make_unique<Instance>(scheduler, layout, num_blocks, engine.prefix_caching, *cost);
}

EngineSetup BuildEngineSetup(ModelCard card, Bundle bundle, const EngineConfig& config,
                             const KvBudget& budget, int64_t step_overhead_ns,
                             const SettingError& error) {
  EngineSetup setup;
  setup.card = std::move(card);
  setup.bundle = std::move(bundle);
  std::optional<int64_t> gpu_memory;
  if (budget.hardware) gpu_memory = budget.hardware->UsableMemoryBytes();
  setup.engine = ResolveEngineConfig(setup.card, config, gpu_memory, error);
  setup.layout = ResolveKvCacheLayout(setup.card, setup.engine, error,
                                      budget.hardware ? &*budget.hardware : nullptr);
  if (setup.bundle.block_size && *setup.bundle.block_size != setup.layout.block_size &&
      !setup.card.IsHybrid()) {
    throw error(kBlockSize.key(), "the bundle was profiled at block size " +
                                      std::to_string(*setup.bundle.block_size) +
                                      ", the engine resolves " +
                                      std::to_string(setup.layout.block_size));
  }
  const int tp = setup.engine.tp;
  if (auto resolved = setup.bundle.engine_resolved.find(tp);
      resolved != setup.bundle.engine_resolved.end() &&
      resolved->second.block_size != setup.layout.block_size) {
    throw error(kBlockSize.key(), "the bundle's engine resolved block size " +
                                      std::to_string(resolved->second.block_size) + " at TP " +
                                      std::to_string(tp) + ", the model card gives " +
                                      std::to_string(setup.layout.block_size));
  }

  // A bundle fleetsim built records the decode kernel it priced at each TP; one priced for
  // another kernel would charge this group the wrong attention.
  if (auto resolved = setup.bundle.engine_resolved.find(tp);
      resolved != setup.bundle.engine_resolved.end() && !resolved->second.decode_kernel.empty() &&
      setup.layout.attention &&
      resolved->second.decode_kernel != setup.layout.attention->decode.name) {
    throw error(kDecodeKernel.key(), "the bundle priced decode kernel " +
                                         resolved->second.decode_kernel + " at TP " +
                                         std::to_string(tp) + ", the engine resolves " +
                                         setup.layout.attention->decode.name);
  }

  kGpuMemoryUtilization.Check(budget.gpu_memory_utilization, error);
  if (budget.kv_cache_bytes) kKvCacheMemoryBytes.Check(*budget.kv_cache_bytes, error);
  if (budget.num_blocks) kNumGpuBlocks.Check(*budget.num_blocks, error);
  if (budget.num_blocks) {
    setup.num_blocks = *budget.num_blocks;
  } else {
    int64_t bytes = 0;
    if (budget.kv_cache_bytes) {
      bytes = *budget.kv_cache_bytes;
    } else if (budget.hardware) {
      // With MTP speculation vLLM loads the MTP module beside the target.
      const int64_t weights = CountWeights(setup.card, tp, setup.engine.quantization,
                                           setup.engine.speculative.enabled())
                                  .bytes_per_rank;
      bytes = KvBytesFromMemory(*gpu_memory, budget.gpu_memory_utilization, weights);
      if (bytes <= 0) throw error("tp", WeightsDoNotFit(*budget.hardware, budget, tp, weights));
    } else {
      throw error(kKvCacheMemoryBytes.key(),
                  "no KV budget: give num_gpu_blocks, kv_cache_memory_bytes or a hardware");
    }
    setup.num_blocks = SizePool(setup.layout, bytes).num_blocks;
  }
  if (setup.num_blocks < 2) throw error(kKvCacheMemoryBytes.key(), "leaves no KV-cache blocks");

  setup.scheduler.max_num_batched_tokens = setup.engine.max_num_batched_tokens;
  setup.scheduler.max_num_seqs = setup.engine.max_num_seqs;
  setup.scheduler.max_model_len = setup.engine.max_model_len;
  setup.scheduler.long_prefill_token_threshold = setup.engine.long_prefill_token_threshold;
  setup.scheduler.chunked_prefill = setup.engine.chunked_prefill;
  setup.scheduler.async_scheduling = setup.engine.async_scheduling;
  setup.scheduler.speculative = setup.engine.speculative;

  CollectiveModel collectives;
  if (tp > 1) {
    if (!budget.hardware)
      throw error("hardware", "TP > 1 needs the hardware's links for its collectives");
    collectives = CollectiveModel(*budget.hardware, tp, setup.card.dtype);
  }
  setup.cost = std::make_unique<StepCostModel>(setup.card, setup.bundle, tp, std::move(collectives),
                                               step_overhead_ns);
  setup.cost->EnableMtpDrafting(setup.engine.speculative.num_tokens);
  // Decode runs (engine/instance.h) share the prices of each batch size; speculative
  // engines step one by one.
  if (!setup.engine.speculative.enabled()) setup.cost->PrepareDecodeRuns(setup.engine.max_num_seqs);
  return setup;
}

}  // namespace fleetsim
