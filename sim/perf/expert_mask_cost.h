// The part of an expert-parallel rank's fused MoE that a one-GPU MoE table does not
// contain: the row stages it runs for the tokens routed to other ranks' experts.
//
// vLLM 0.19 runs an unquantized EP rank's experts through the Triton modular kernel
// (fused_moe/oracle/unquantized.py -> TritonExperts, fused_moe/fused_moe.py) on every token
// the dispatch gathered, with an expert_map that marks other ranks' experts -1. Its GEMMs
// stream only the rank's own experts' weights -- what the table at gathered / DP tokens
// prices (StepCostModel::ExpertShardMoeUs) -- but every stage that works row by row runs
// over all gathered tokens x top-k rows: the GEMMs' programs for other ranks' blocks write
// zeros to their rows of both intermediate caches (write_zeros_to_output), the gated
// activation reads and writes every row, and moe_sum reads every row; the top-k reads
// every gathered token's router logits and moe_sum writes every token's output. The table
// carried only its own rows through them. This prices the difference as memory traffic
// at the card's streaming rate:
//
//   rows:   gathered x top-k x (5 x intermediate + 2 x hidden) x activation bytes
//           - (gathered / DP) x top-k x (5 x intermediate / TP + 2 x hidden) x bytes
//   tokens: gathered x (1 - 1 / DP) x (hidden + experts) x activation bytes
//
// (a row's outputs and kernels as perf/analytic_kernels.h counts them, FusedMoeRowOutputs
// + FusedMoeRowKernels; the table is the engine's TP-tp one, whose experts are 1/TP wide),
// at the analytic model's streaming rate for the card (KernelRoofline::StreamBytesPerSecond).
#pragma once

#include "model/hardware.h"
#include "model/model_card.h"

namespace fleetsim {

class ExpertMaskCost {
 public:
  ExpertMaskCost() = default;  // prices nothing
  // A rank of `dp` DP ranks of TP `tp` engines serving `card` on `hardware`.
  ExpertMaskCost(const ModelCard& card, const HardwareSpec& hardware, int tp, int dp);

  // The extra bytes one MoE layer moves per gathered token (no hardware needed).
  static double BytesPerGatheredToken(const ModelCard& card, int tp, int dp);

  // One MoE layer's extra time, microseconds, for `gathered_tokens` gathered tokens.
  double LayerUs(double gathered_tokens) const;
  // The extra bytes one MoE layer moves per gathered token.
  double BytesPerGatheredToken() const { return bytes_per_token_; }
  // The streaming rate they move at, bytes per second.
  double StreamBytesPerSecond() const { return stream_bytes_per_s_; }

 private:
  double bytes_per_token_ = 0;
  double stream_bytes_per_s_ = 0;
};

}  // namespace fleetsim
