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
  // Every gathered pair's rows through the stages each row passes, less the table's own
  // rows (1/TP-wide experts) through the same (a local row's activation read is in both).
  const auto row = [&](double width) {
    return FusedMoeRowOutputs(width, hidden) + FusedMoeRowKernels(width, hidden);
  };
  const double rows = top_k * row(inter) - top_k / ranks * row(inter / static_cast<double>(tp));
  const double tokens = (1 - 1 / ranks) * (hidden + experts);
  return (rows + tokens) * act;
}

ExpertMaskCost::ExpertMaskCost(const ModelCard& card, const HardwareSpec& hardware, int tp, int dp)
    : bytes_per_token_(BytesPerGatheredToken(card, tp, dp)) {
  if (bytes_per_token_ <= 0) return;
  // At the analytic model's streaming rate for this card.
  stream_bytes_per_s_ = KernelRoofline(hardware, card.dtype).StreamBytesPerSecond();
}

double ExpertMaskCost::LayerUs(double gathered_tokens) const {
  if (stream_bytes_per_s_ <= 0 || gathered_tokens <= 0) return 0;
  return gathered_tokens * bytes_per_token_ / stream_bytes_per_s_ * 1e6;
}

}  // namespace fleetsim
