// The parts of `fleetsim inspect` that need a GPU: which attention backend and decode kernel
// vLLM runs there and why, how the weights are stored, and what one decode step costs per
// kernel on the analytic kernel model (--decode-step).
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "core/json_writer.h"
#include "engine/engine_config.h"
#include "engine/kv_cache_layout.h"
#include "model/hardware.h"
#include "model/model_card.h"
#include "perf/analytic_kernels.h"
#include "perf/decode_kernels.h"

namespace fleetsim {

// One kernel of a decode step: its cost in one layer and the layers that run it.
struct StepKernelRow {
  std::string kind;    // head, full_attention, linear_attention, mlp, moe
  std::string kernel;  // as the bundle names it
  double us_per_layer = 0;
  int layers = 0;
  double Us() const { return us_per_layer * layers; }
};

// One collective of a TP > 1 step, as the engine charges it (perf/step_cost.cc): what
// each call moves, the communicator vLLM or NCCL takes for it, and how often a step runs it.
struct StepCollectiveRow {
  std::string name;  // all_reduce, logits_all_gather
  std::string how;   // "custom one-shot", "nccl ring LL", ...
  int64_t bytes = 0;
  double us_each = 0;
  int calls = 0;
  double Us() const { return us_each * calls; }
};

// The decodes' attention call beside a prefill chunk (no history): a mixed step's one call.
struct MixedAttentionReport {
  int64_t chunk = 0;
  KernelRoofline::MixedCallReport call;
  double chunk_alone_us = 0;    // the chunk's own call, without the decodes
  double decodes_alone_us = 0;  // the decodes' own call (the decode step's attention)
};

// `batch` sequences decoding one token each after `context` tokens of history.
struct DecodeStepReport {
  int64_t context = 0;
  int64_t batch = 1;
  int tp = 1;
  std::vector<StepKernelRow> rows;
  std::vector<StepCollectiveRow> collectives;  // empty at TP 1
  DecodeGridReport attention_grid;             // one attention layer's decode call
  std::optional<MixedAttentionReport> mixed;   // with --prefill-chunk
  double TotalUs() const;                      // the kernels
  double KindUs(const std::string& kind) const;
  double CollectivesUs() const;
};

DecodeStepReport PriceDecodeStep(const ModelCard& card, const HardwareSpec& hardware,
                                 const ResolvedEngineConfig& engine, const KvCacheLayout& layout,
                                 int64_t context, int64_t batch,
                                 std::optional<int64_t> prefill_chunk = std::nullopt);

void PrintAttentionText(const std::string& hardware, const KvCacheLayout& layout,
                        const ResolvedEngineConfig& engine, std::ostream& out);
void PrintDecodeStepText(const DecodeStepReport& step, std::ostream& out);
void JsonAttention(const KvCacheLayout& layout, const ResolvedEngineConfig& engine,
                   JsonWriter& json);
void JsonDecodeStep(const std::optional<DecodeStepReport>& step, JsonWriter& json);

}  // namespace fleetsim
