#include "app/inspect_dp.h"

#include <cmath>
#include <string>
#include <vector>

#include "core/format.h"
#include "core/input_error.h"
#include "engine/dp_setup.h"
#include "perf/collective.h"
#include "perf/expert_mask_cost.h"

namespace fleetsim {
namespace {

// What CollectiveModel::ExpertDispatchCombineUs moves when the first rank runs
// `tokens_per_rank` tokens and every other rank `other_rank_tokens` (CUDA graphs pad every
// rank to the largest within the capture size; beyond it each keeps its own).
DpExchange Exchange(const char* batch, int64_t tokens_per_rank, int64_t other_rank_tokens,
                    const DpReport& r, const ModelCard& card, const CollectiveModel* group,
                    const ExpertMaskCost* mask) {
  DpExchange e;
  e.batch = batch;
  e.tokens_per_rank = tokens_per_rank;
  e.other_rank_tokens = other_rank_tokens;
  e.rooted = other_rank_tokens != tokens_per_rank;
  e.gathered_tokens = tokens_per_rank + other_rank_tokens * (r.dp - 1);
  const int64_t act_bytes = BytesOf(card.dtype);
  const int experts = card.moe->num_experts;
  e.dispatch_bytes =
      CollectiveModel::ExpertDispatchBytes(e.gathered_tokens, card.hidden_size, experts, act_bytes);
  e.combine_bytes =
      CollectiveModel::ExpertCombineBytes(e.gathered_tokens, card.hidden_size, act_bytes);
  if (group) {
    std::vector<int64_t> ranks(static_cast<std::size_t>(r.dp), other_rank_tokens);
    ranks.front() = tokens_per_rank;
    e.per_layer_us = group->ExpertDispatchCombineUs(ranks, card.hidden_size, experts);
    e.per_step_us = *e.per_layer_us * r.moe_layers;
  }
  const auto gathered = static_cast<double>(e.gathered_tokens);
  e.masked_bytes = gathered * ExpertMaskCost::BytesPerGatheredToken(card, r.tp, r.dp);
  if (mask) {
    e.masked_per_layer_us = mask->LayerUs(gathered);
    e.masked_per_step_us = *e.masked_per_layer_us * r.moe_layers;
  }
  return e;
}

std::string Us(const std::optional<double>& us) {
  return us ? Fixed(*us, 1) + " us" : std::string("- (give --hardware)");
}

}  // namespace

DpReport BuildDpReport(const ModelCard& card, const ResolvedEngineConfig& engine, int dp,
                       bool enable_expert_parallel, const HardwareSpec* hardware) {
  if (dp < 1) throw OptionError("--data-parallel-size", "must be at least 1");
  if (auto why = DpExpertParallelViolation(card, dp, enable_expert_parallel)) {
    throw OptionError(enable_expert_parallel ? "--data-parallel-size" : "--enable-expert-parallel",
                      *why);
  }
  DpReport r;
  r.dp = dp;
  r.tp = engine.tp;
  r.gpus = dp * engine.tp;
  r.experts = card.moe->num_experts;
  r.moe_layers = card.CountMoeLayers();
  // vLLM's determine_expert_map gives the first experts % GPUs ranks one more: the
  // largest shard.
  r.experts_per_rank = (r.experts + r.gpus - 1) / r.gpus;
  r.expert_bytes_per_rank = ExpertWeightBytesPerTpRank(card, engine.tp) / dp;
  r.capture_tokens =
      DefaultCudagraphCaptureTokens(engine.max_num_seqs, engine.max_num_batched_tokens);
  std::optional<CollectiveModel> group;
  std::optional<ExpertMaskCost> mask;
  if (hardware) {
    r.gpus_per_node = static_cast<int>(hardware->gpus_per_node.value);
    if (r.gpus > *r.gpus_per_node) {
      throw OptionError("--data-parallel-size",
                        std::to_string(dp) + " x TP " + std::to_string(engine.tp) + " = " +
                            std::to_string(r.gpus) + " GPUs do not fit a node of " +
                            std::to_string(*r.gpus_per_node) + " " + hardware->name +
                            " (DP x EP stays in one node)");
    }
    group.emplace(*hardware, dp, card.dtype);
    mask.emplace(card, *hardware, engine.tp, dp);
  }
  const CollectiveModel* g = group ? &*group : nullptr;
  const ExpertMaskCost* m = mask ? &*mask : nullptr;
  r.decode =
      Exchange("max_num_seqs decodes", engine.max_num_seqs, engine.max_num_seqs, r, card, g, m);
  r.prefill = Exchange("max_num_batched_tokens", engine.max_num_batched_tokens,
                       engine.max_num_batched_tokens, r, card, g, m);
  // Past the capture size the prefill rank runs eager, and the idle ranks' 1-token dummy
  // batches are not padded to it (dp_utils.py: the ranks' minimum cudagraph mode).
  if (r.dp > 1 && engine.max_num_batched_tokens > r.capture_tokens) {
    r.lone_prefill = Exchange("one rank's max_num_batched_tokens beside dummy batches",
                              engine.max_num_batched_tokens, 1, r, card, g, m);
  }
  return r;
}

void PrintDpText(const DpReport& r, std::ostream& out) {
  out << "\ndata parallelism with expert parallelism (vLLM 0.19, all2all_backend "
         "allgather_reducescatter)\n";
  out << "  DP " << r.dp << " x TP " << r.tp << " = " << r.gpus << " GPUs";
  if (r.gpus_per_node) out << " of a " << *r.gpus_per_node << "-GPU node";
  out << "; each DP rank its own scheduler and KV cache, in lock-step for the MoE layers\n";
  out << "  experts: " << r.experts << ", at most " << r.experts_per_rank << " per GPU (EP "
      << r.gpus << "), " << BinaryBytes(r.expert_bytes_per_rank) << " of expert weights per GPU\n";
  out << "  CUDA-graph padding: every rank to the largest batch up to " << r.capture_tokens
      << " tokens (max_cudagraph_capture_size)\n";
  out << "  per step, each of " << r.moe_layers
      << " MoE layers: dispatch all-gather + combine reduce-scatter (equal counts), or a "
         "broadcast + a reduce rooted at each rank (unequal)\n";
  for (const DpExchange* e : r.Exchanges()) {
    out << "    " << e->batch << " (";
    if (e->rooted) {
      out << e->tokens_per_rank << " + " << e->other_rank_tokens << " per other rank, rooted";
    } else {
      out << e->tokens_per_rank << " per rank";
    }
    out << ", " << e->gathered_tokens << " gathered): " << DecimalBytes(e->dispatch_bytes) << " + "
        << DecimalBytes(e->combine_bytes) << " a layer, " << Us(e->per_layer_us) << " a layer, "
        << Us(e->per_step_us) << " a step\n";
  }
  out << "  per step, each MoE layer's row stages (zero stores, activation, moe_sum) for the "
         "tokens routed to other GPUs' experts\n";
  for (const DpExchange* e : r.Exchanges()) {
    out << "    " << e->batch << ": " << DecimalBytes(static_cast<int64_t>(e->masked_bytes))
        << " a layer, " << Us(e->masked_per_layer_us) << " a layer, " << Us(e->masked_per_step_us)
        << " a step\n";
  }
}

void JsonDp(const std::optional<DpReport>& report, JsonWriter& json) {
  json.Key("data_parallel");
  if (!report) {
    json.Null();
    return;
  }
  const DpReport& r = *report;
  json.BeginObject();
  json.Field("dp", r.dp);
  json.Field("tp", r.tp);
  json.Field("gpus", r.gpus);
  json.Field("experts", r.experts);
  json.Field("experts_per_gpu", r.experts_per_rank);
  json.Field("expert_bytes_per_gpu", r.expert_bytes_per_rank);
  json.Field("cudagraph_capture_tokens", r.capture_tokens);
  json.Field("moe_layers", r.moe_layers);
  json.Key("exchange");
  json.BeginArray();
  for (const DpExchange* e : r.Exchanges()) {
    json.BeginObject();
    json.Field("batch", std::string(e->batch));
    json.Field("tokens_per_rank", e->tokens_per_rank);
    json.Field("other_rank_tokens", e->other_rank_tokens);
    json.Field("rooted", e->rooted);
    json.Field("gathered_tokens", e->gathered_tokens);
    json.Field("dispatch_bytes", e->dispatch_bytes);
    json.Field("combine_bytes", e->combine_bytes);
    json.Field("masked_row_bytes", e->masked_bytes);
    for (auto [key, us] :
         {std::pair{"per_layer_us", e->per_layer_us}, std::pair{"per_step_us", e->per_step_us},
          std::pair{"masked_per_layer_us", e->masked_per_layer_us},
          std::pair{"masked_per_step_us", e->masked_per_step_us}}) {
      json.Key(key);
      if (us) {
        json.Value(*us);
      } else {
        json.Null();
      }
    }
    json.EndObject();
  }
  json.EndArray();
  json.EndObject();
}

}  // namespace fleetsim
