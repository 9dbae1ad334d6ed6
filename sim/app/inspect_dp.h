// `fleetsim inspect --data-parallel-size N --enable-expert-parallel`: a DP x EP deployment
// of a MoE model as vLLM 0.19 lays it out (engine/dp_engine.h): the GPUs, each rank's
// expert shard and weights, the CUDA-graph padding, and the collectives every MoE layer
// adds per step -- the dispatch all-gather and the combine reduce-scatter of the gathered
// tokens, priced by the NCCL model when the hardware is given.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <vector>

#include "core/json_writer.h"
#include "engine/engine_config.h"
#include "model/hardware.h"
#include "model/model_card.h"

namespace fleetsim {

// One step's exchange at a given batch per rank.
struct DpExchange {
  const char* batch = "";         // what the batch is
  int64_t tokens_per_rank = 0;    // the first rank's
  int64_t other_rank_tokens = 0;  // each other rank's (the same when all are alike)
  bool rooted = false;            // unequal counts: broadcasts and reduces, not AG/RS
  int64_t gathered_tokens = 0;
  int64_t dispatch_bytes = 0;          // all-gathered: hidden + router logits (activation dtype)
  int64_t combine_bytes = 0;           // reduce-scattered hidden states
  std::optional<double> per_layer_us;  // dispatch + combine, with --hardware
  std::optional<double> per_step_us;   // all MoE layers
  // A rank's row stages for other ranks' experts (perf/expert_mask_cost.h), a layer.
  double masked_bytes = 0;
  std::optional<double> masked_per_layer_us, masked_per_step_us;  // with --hardware
};

struct DpReport {
  int dp = 1;
  int tp = 1;
  int gpus = 1;
  int experts = 0;
  int experts_per_rank = 0;  // the largest shard: experts / (DP x TP), rounded up
  int moe_layers = 0;
  int64_t expert_bytes_per_rank = 0;
  int64_t capture_tokens = 0;        // max_cudagraph_capture_size: padding to the largest rank
  std::optional<int> gpus_per_node;  // the catalog's, with --hardware
  // Every rank with max_num_seqs decodes; every rank with a max_num_batched_tokens
  // prefill; one rank prefilling beside the others' dummy batches (eager: unequal counts).
  // (The last only past the capture size, with more than one rank.)
  DpExchange decode, prefill;
  std::optional<DpExchange> lone_prefill;

  std::vector<const DpExchange*> Exchanges() const {
    std::vector<const DpExchange*> all{&decode, &prefill};
    if (lone_prefill) all.push_back(&*lone_prefill);
    return all;
  }
};

// `dp` ranks of `engine` serving `card`; refusals (not MoE, no EP, more GPUs than a node
// of `hardware`) are OptionErrors.
DpReport BuildDpReport(const ModelCard& card, const ResolvedEngineConfig& engine, int dp,
                       bool enable_expert_parallel, const HardwareSpec* hardware);

void PrintDpText(const DpReport& report, std::ostream& out);
void JsonDp(const std::optional<DpReport>& report, JsonWriter& json);

}  // namespace fleetsim
