#include "engine/dp_setup.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "model/weight_count.h"

namespace fleetsim {

std::optional<std::string> DpExpertParallelViolation(const ModelCard& card, int dp,
                                                     bool enable_expert_parallel) {
  if (dp <= 1) return std::nullopt;
  if (!enable_expert_parallel) {
    return "data parallelism is simulated with expert parallelism only "
           "(enable_expert_parallel: true)";
  }
  if (!card.moe || card.CountMoeLayers() == 0)
    return "expert parallelism needs a MoE model; " + card.name + " has no MoE layers";
  return std::nullopt;
}

int64_t ExpertWeightBytesPerTpRank(const ModelCard& card, int tp) {
  if (!card.moe) return 0;
  const int64_t per_expert = 3 * card.moe->expert_intermediate * card.hidden_size;
  return static_cast<int64_t>(card.CountMoeLayers()) * card.moe->num_experts * per_expert *
         BytesOf(card.dtype) / tp;
}

KvBudget DpExpertParallelKvBudget(const ModelCard& card, int tp, int dp, KvBudget budget) {
  if (budget.num_blocks || budget.kv_cache_bytes || !budget.hardware) return budget;
  const int64_t experts = ExpertWeightBytesPerTpRank(card, tp);
  const int64_t weights = CountWeights(card, tp).bytes_per_rank - experts + experts / dp;
  budget.kv_cache_bytes = KvBytesFromMemory(budget.hardware->UsableMemoryBytes(),
                                            budget.gpu_memory_utilization, weights);
  return budget;
}

int64_t DefaultCudagraphCaptureTokens(int64_t max_num_seqs) {
  return std::min<int64_t>(2 * max_num_seqs, 512);
}

std::unique_ptr<DpEngine> MakeDpEngine(const EngineSetup& setup, int dp,
                                       const HardwareSpec& hardware, int64_t capture_tokens) {
  std::vector<std::unique_ptr<Instance>> ranks;
  for (int r = 0; r < dp; ++r)
    ranks.push_back(setup.MakeInstance());
  return std::make_unique<DpEngine>(std::move(ranks), *setup.cost,
                                    CollectiveModel(hardware, dp, setup.card.dtype),
                                    setup.card.hidden_size, capture_tokens);
}

}  // namespace fleetsim
