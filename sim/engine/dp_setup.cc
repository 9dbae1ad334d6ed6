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

namespace {

int64_t RoundUp(int64_t n, int64_t step) {
  return (n + step - 1) / step * step;
}

}  // namespace

int64_t DefaultCudagraphCaptureTokens(int64_t max_num_seqs, int64_t max_num_batched_tokens) {
  const int64_t most = std::min({2 * max_num_seqs, int64_t{512}, max_num_batched_tokens});
  if (most >= 256) return 256 + (most - 256) / 16 * 16;
  if (most >= 8) return most / 8 * 8;
  if (most >= 4) return 4;
  return std::clamp<int64_t>(most, 0, 2);
}

int64_t CudagraphPaddedTokens(int64_t tokens, int64_t capture_tokens) {
  if (tokens > capture_tokens) return 0;
  if (tokens <= 2) return tokens;
  if (tokens <= 4) return 4;
  if (tokens <= 256) return RoundUp(tokens, 8);
  return 256 + RoundUp(tokens - 256, 16);
}

std::unique_ptr<DpEngine> MakeDpEngine(const EngineSetup& setup, int dp,
                                       const HardwareSpec& hardware, int64_t capture_tokens) {
  std::vector<std::unique_ptr<Instance>> ranks;
  for (int r = 0; r < dp; ++r)
    ranks.push_back(setup.MakeInstance());
  return std::make_unique<DpEngine>(std::move(ranks), *setup.cost,
                                    CollectiveModel(hardware, dp, setup.card.dtype),
                                    setup.card.hidden_size, capture_tokens,
                                    ExpertMaskCost(setup.card, hardware, setup.engine.tp, dp));
}

}  // namespace fleetsim
