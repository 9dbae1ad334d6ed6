#include "app/inspect_attention.h"

#include <algorithm>

#include "core/format.h"
#include "perf/analytic_kernels.h"
#include "perf/collective.h"
#include "perf/layer_kernels.h"
#include "perf/step_cost.h"
#include "perf/weight_format.h"

namespace fleetsim {
namespace {

void Line(std::ostream& out, const std::string& label, const std::string& value) {
  out << "  " << label << std::string(label.size() < 28 ? 28 - label.size() : 1, ' ') << value
      << '\n';
}

std::string Us(double us) {
  return Fixed(us, us < 100 ? 2 : 1) + " us";
}

// The cost of `kernel` in one layer of a decode step, or nullopt when the model does not
// run it (a q/k norm without one, a fused kernel the analytic model does not price).
std::optional<double> KernelUs(const AnalyticKernels& k, const ModelCard& card, Kernel kernel,
                               int64_t context, int64_t batch) {
  switch (FileOf(kernel)) {
    case BundleFile::kDense:
      return k.DenseUs(kernel, batch);
    case BundleFile::kPerSequence:
      return k.PerSequenceUs(kernel, batch);
    case BundleFile::kAttention:
      // The decode attends to its history and its own new token, as the bundle's rows do.
      return k.AttentionDecodeUs(batch, context + 1);
    case BundleFile::kLinearAttention:
      return k.GdnUs(kernel, 0, batch);
    case BundleFile::kMoe: {
      if (!card.moe) return std::nullopt;
      const int64_t reached =
          std::min<int64_t>(card.moe->num_experts, batch * card.moe->experts_per_token);
      return k.MoeUs(batch, reached);
    }
    default:
      return std::nullopt;
  }
}

}  // namespace

double DecodeStepReport::TotalUs() const {
  double total = 0;
  for (const StepKernelRow& row : rows)
    total += row.Us();
  return total;
}

double DecodeStepReport::KindUs(const std::string& kind) const {
  double total = 0;
  for (const StepKernelRow& row : rows) {
    if (row.kind == kind) total += row.Us();
  }
  return total;
}

double DecodeStepReport::CollectivesUs() const {
  double total = 0;
  for (const StepCollectiveRow& row : collectives)
    total += row.Us();
  return total;
}

namespace {

// What StepCostModel::Cost adds at TP > 1 for a step of `tokens` tokens that samples
// `sampled` sequences: an all-reduce of the hidden states after every layer's mixer and
// MLP/MoE block and in the vocab-parallel embedding, and the logits' all-gather.
std::vector<StepCollectiveRow> TpCollectives(const ModelCard& card, const HardwareSpec& hardware,
                                             int tp, int64_t tokens, int64_t sampled) {
  if (tp <= 1) return {};
  const CollectiveModel group(hardware, tp, card.dtype);
  const int64_t hidden_bytes = tokens * card.hidden_size * BytesOf(card.dtype);
  const int64_t logits_bytes = sampled * PaddedVocab(card.vocab_size) * BytesOf(card.dtype);
  return {
      {"all_reduce", group.AllReduceHow(hidden_bytes), hidden_bytes,
       group.AllReduceUs(hidden_bytes), 2 * card.NumLayers() + 1},
      {"logits_all_gather",
       "nccl " + group.NcclHow(NcclCollective::kAllGather, static_cast<double>(logits_bytes)),
       logits_bytes, group.NcclUs(NcclCollective::kAllGather, static_cast<double>(logits_bytes)),
       1},
  };
}

}  // namespace

DecodeStepReport PriceDecodeStep(const ModelCard& card, const HardwareSpec& hardware,
                                 const ResolvedEngineConfig& engine, const KvCacheLayout& layout,
                                 int64_t context, int64_t batch,
                                 std::optional<int64_t> prefill_chunk) {
  const AnalyticKernels k(card, hardware, engine.tp, *layout.attention, engine.quantization);
  DecodeStepReport step;
  step.context = context;
  step.batch = batch;
  step.tp = engine.tp;
  step.collectives = TpCollectives(card, hardware, engine.tp, batch, batch);
  step.attention_grid = k.DecodeLaunch(batch, context + 1);
  if (prefill_chunk && LayerCount(card, LayerKind::kFullAttention) > 0) {
    step.mixed = MixedAttentionReport{
        *prefill_chunk, k.MixedLaunch(*prefill_chunk, 0, batch, context + 1),
        k.AttentionPrefillUs(*prefill_chunk, 0), k.AttentionDecodeUs(batch, context + 1)};
  }
  for (const LayerKind kind : kLayerKinds) {
    const int layers = LayerCount(card, kind);
    // The target's decode step: the MTP module's draft passes are not part of it.
    if (layers == 0 || kind == LayerKind::kMtp) continue;
    for (const KernelSpec& spec : KernelsOf(kind)) {
      if (FileOf(spec.kernel) == BundleFile::kLinearAttention &&
          !RunsIn(spec.kernel, Regime::kDecode))
        continue;
      const std::optional<double> us = KernelUs(k, card, spec.kernel, context, batch);
      if (!us) continue;
      step.rows.push_back(
          {std::string(NameOf(kind)), std::string(NameOf(spec.kernel)), *us * spec.times, layers});
    }
  }
  return step;
}

void PrintAttentionText(const std::string& hardware, const KvCacheLayout& layout,
                        const ResolvedEngineConfig& engine, std::ostream& out) {
  out << "attention backend\n";
  if (!layout.attention) {
    Line(out, "backend", "not chosen: vLLM chooses per GPU (give --hardware)");
  } else {
    const AttentionPlan& a = *layout.attention;
    Line(out, "backend", a.backend.name + " on " + hardware + " (" + a.backend_why + ")");
    Line(out, "hybrid alignment base",
         std::to_string(layout.alignment_base) + " (" + a.backend.name +
             "'s smallest kernel block size; its kernel block sizes: " +
             a.backend.kernel_block_sizes.Text() + ")");
    Line(out, "kernel block size",
         std::to_string(a.kernel_block_size) + " for the " + std::to_string(layout.block_size) +
             "-token block");
    Line(
        out, "decode kernel",
        a.decode.name + " (" + std::string(NameOf(a.decode.grid)) + " grid; " + a.decode_why + ")");
    if (a.decode.program_rate_bytes_per_s) {
      Line(out, "per-program KV rate",
           Fixed(*a.decode.program_rate_bytes_per_s / 1e9, 1) +
               " GB/s (catalog: " + a.decode.program_rate_source.substr(0, 60) + "...)");
    }
  }
  out << "weights\n";
  Line(out, "quantization", engine.quantization.Describe());
}

void PrintDecodeStepText(const DecodeStepReport& step, std::ostream& out) {
  out << "decode step (analytic kernels, " << step.batch << " sequence(s) after "
      << WithCommas(step.context) << " tokens, TP " << step.tp
      << (step.tp > 1 ? ": per rank, with the TP collectives" : "")
      << "; host overhead not included)\n";
  const DecodeGridReport& g = step.attention_grid;
  Line(out, "attention launch grid",
       Fixed(g.programs, 0) + " programs (" + Fixed(g.splits, 0) + " split(s)), " +
           Fixed(g.waves, 2) + " wave(s), " + Fixed(g.bytes_per_program / 1e6, 2) +
           " MB of KV each at " + Fixed(g.program_rate / 1e9, 1) + " GB/s per program: " +
           Us(g.main_us) + (g.reduce_us > 0 ? " + reduce " + Us(g.reduce_us) : "") +
           " per layer, bound by " + g.bound);
  if (step.mixed) {
    const MixedAttentionReport& m = *step.mixed;
    std::string call = Us(m.call.us) + " per layer";
    if (m.call.one_grid) {
      call += ": one grid of " + WithCommas(std::llround(m.call.tiles)) + " tiles and " +
              WithCommas(std::llround(m.call.empty_tiles)) +
              " empty ones (FlashAttention 2 gives every sequence the chunk's query blocks), " +
              Us(m.call.empty_us) + " of it the empty ones";
    }
    Line(out, "beside a " + WithCommas(m.chunk) + "-token chunk",
         call + "; the chunk alone " + Us(m.chunk_alone_us) + ", the decodes alone " +
             Us(m.decodes_alone_us));
  }
  for (const StepKernelRow& row : step.rows) {
    Line(out, "  " + row.kind + " " + row.kernel,
         Us(row.us_per_layer) + " x " + std::to_string(row.layers) + " = " + Us(row.Us()));
  }
  for (const char* kind : {"head", "full_attention", "linear_attention", "mlp", "moe"}) {
    const double us = step.KindUs(kind);
    if (us > 0) Line(out, std::string(kind) + " total", Us(us));
  }
  Line(out, "step kernels total", Us(step.TotalUs()));
  for (const StepCollectiveRow& c : step.collectives) {
    Line(out, "  " + c.name,
         Us(c.us_each) + " x " + std::to_string(c.calls) + " = " + Us(c.Us()) + " (" +
             WithCommas(c.bytes) + " B each, " + c.how + ")");
  }
  if (!step.collectives.empty()) {
    Line(out, "collectives total", Us(step.CollectivesUs()));
    Line(out, "step total", Us(step.TotalUs() + step.CollectivesUs()));
  }
}

void JsonAttention(const KvCacheLayout& layout, const ResolvedEngineConfig& engine,
                   JsonWriter& json) {
  json.Key("attention_backend");
  if (!layout.attention) {
    json.Null();
  } else {
    const AttentionPlan& a = *layout.attention;
    json.BeginObject();
    json.Field("backend", a.backend.name);
    json.Field("backend_pinned", a.backend_pinned);
    json.Field("backend_why", a.backend_why);
    json.Field("alignment_base", layout.alignment_base);
    json.Field("kernel_block_size", a.kernel_block_size);
    json.Field("decode_kernel", a.decode.name);
    json.Field("decode_grid", NameOf(a.decode.grid));
    json.Field("decode_pinned", a.decode_pinned);
    json.Field("decode_why", a.decode_why);
    json.Key("program_rate_bytes_per_s");
    if (a.decode.program_rate_bytes_per_s) {
      json.Value(*a.decode.program_rate_bytes_per_s);
    } else {
      json.Null();
    }
    json.EndObject();
  }
  json.Key("quantization");
  json.BeginObject();
  json.Field("method", NameOf(engine.quantization.method));
  json.Field("weight_bits", engine.quantization.weight_bits);
  json.Field("group_size", engine.quantization.group_size);
  json.Field("w8a8", engine.quantization.activations);
  json.Field("origin", engine.quantization.IsQuantized() ? engine.quantization.origin : "");
  json.EndObject();
}

void JsonDecodeStep(const std::optional<DecodeStepReport>& step, JsonWriter& json) {
  json.Key("decode_step");
  if (!step) {
    json.Null();
    return;
  }
  json.BeginObject();
  json.Field("context", step->context);
  json.Field("batch", step->batch);
  const DecodeGridReport& g = step->attention_grid;
  json.Key("attention_grid");
  json.BeginObject();
  json.Field("programs", g.programs);
  json.Field("splits", g.splits);
  json.Field("waves", g.waves);
  json.Field("bytes_per_program", g.bytes_per_program);
  json.Field("program_rate_bytes_per_s", g.program_rate);
  json.Field("main_us", g.main_us);
  json.Field("reduce_us", g.reduce_us);
  json.Field("bound", g.bound);
  json.EndObject();
  json.Key("mixed_attention");
  if (!step->mixed) {
    json.Null();
  } else {
    const MixedAttentionReport& m = *step->mixed;
    json.BeginObject();
    json.Field("prefill_chunk", m.chunk);
    json.Field("one_grid", m.call.one_grid);
    json.Field("tiles", m.call.tiles);
    json.Field("empty_tiles", m.call.empty_tiles);
    json.Field("empty_tiles_us", m.call.empty_us);
    json.Field("us_per_layer", m.call.us);
    json.Field("chunk_alone_us", m.chunk_alone_us);
    json.Field("decodes_alone_us", m.decodes_alone_us);
    json.EndObject();
  }
  json.Key("kernels");
  json.BeginArray();
  for (const StepKernelRow& row : step->rows) {
    json.BeginObject();
    json.Field("kind", row.kind);
    json.Field("kernel", row.kernel);
    json.Field("us_per_layer", row.us_per_layer);
    json.Field("layers", row.layers);
    json.Field("us", row.Us());
    json.EndObject();
  }
  json.EndArray();
  json.Key("kind_us");
  json.BeginObject();
  for (const char* kind : {"head", "full_attention", "linear_attention", "mlp", "moe"})
    json.Field(kind, step->KindUs(kind));
  json.EndObject();
  json.Field("total_us", step->TotalUs());
  json.Field("tp", step->tp);
  json.Key("collectives");
  json.BeginArray();
  for (const StepCollectiveRow& c : step->collectives) {
    json.BeginObject();
    json.Field("name", c.name);
    json.Field("how", c.how);
    json.Field("bytes", c.bytes);
    json.Field("us_each", c.us_each);
    json.Field("calls", c.calls);
    json.Field("us", c.Us());
    json.EndObject();
  }
  json.EndArray();
  json.Field("collectives_us", step->CollectivesUs());
  json.Field("step_us", step->TotalUs() + step->CollectivesUs());
  json.EndObject();
}

}  // namespace fleetsim
