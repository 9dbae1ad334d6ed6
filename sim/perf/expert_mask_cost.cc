#include "perf/expert_mask_cost.h"

#include "perf/analytic_kernels.h"

namespace fleetsim {

double ExpertMaskCost::BytesPerGatheredToken(const ModelCard& card, int tp, int dp) {
  if (!card.moe || dp <= 1) return 0;
  const double act = BytesOf(card.dtype);
  const double hidden = static_cast<double>(card.hidden_size);
  const double inter = static_cast<double>(card.moe->expert_intermediate);
  const double top_k = card.moe->experts_per_token;
  const double experts = card.moe->num_experts;
  const double ranks = dp;
  const double rows = top_k * (5 * inter + 2 * hidden) -
                      top_k / ranks * (5 * inter / static_cast<double>(tp) + 2 * hidden);
  const double tokens = (1 - 1 / ranks) * (hidden + experts);
  return (rows + tokens) * act;
}

ExpertMaskCost::ExpertMaskCost(const ModelCard& card, const HardwareSpec& hardware, int tp, int dp)
    : bytes_per_token_(BytesPerGatheredToken(card, tp, dp)) {
  if (bytes_per_token_ <= 0) return;
  // The rate streaming kernels reach: the card's measured one where the catalog has it,
  // else the analytic model's fitted fraction of nominal (perf/analytic_kernels.h).
  const double efficiency = hardware.memory_stream_efficiency
                                ? hardware.memory_stream_efficiency->value
                                : AnalyticConstants{}.memory_efficiency;
  stream_bytes_per_s_ = hardware.memory_bandwidth_bytes_per_s.value * efficiency;
}

double ExpertMaskCost::LayerUs(double gathered_tokens) const {
  if (stream_bytes_per_s_ <= 0 || gathered_tokens <= 0) return 0;
  return gathered_tokens * bytes_per_token_ / stream_bytes_per_s_ * 1e6;
}

}  // namespace fleetsim
