#include "app/inspect_report.h"

#include <cstdio>
#include <map>

#include "core/format.h"
#include "core/json_writer.h"

namespace fleetsim {
namespace {

void Line(std::ostream& out, const std::string& label, const std::string& value) {
  out << "  " << label << std::string(label.size() < 28 ? 28 - label.size() : 1, ' ') << value
      << '\n';
}

std::string Bytes(int64_t bytes) {
  return WithCommas(bytes) + " B";
}

// "[linear_attention x3, full_attention] x 16" for a repeating layer list.
std::string LayerPattern(const ModelCard& card) {
  const auto& layers = card.layers;
  for (std::size_t period = 1; period <= layers.size(); ++period) {
    if (layers.size() % period != 0) continue;
    bool repeats = true;
    for (std::size_t i = period; i < layers.size() && repeats; ++i) {
      repeats = layers[i] == layers[i - period];
    }
    if (!repeats) continue;
    std::string text = "[";
    for (std::size_t i = 0; i < period;) {
      std::size_t run = 1;
      while (i + run < period && layers[i + run] == layers[i])
        ++run;
      text += (i == 0 ? "" : ", ") + std::string(NameOf(layers[i]));
      if (run > 1) text += " x" + std::to_string(run);
      i += run;
    }
    return text + "] x " + std::to_string(layers.size() / period);
  }
  return "irregular";
}

std::string LayerList(const std::vector<int>& layers) {
  std::string text;
  for (int layer : layers)
    text += (text.empty() ? "" : ",") + std::to_string(layer);
  return text;
}

std::string Shape(const auto& dims) {
  std::string text = "(";
  for (std::size_t i = 0; i < dims.size(); ++i) {
    text += (i == 0 ? "" : ", ") + std::to_string(dims[i]);
  }
  return text + ")";
}

std::string OnOff(bool on) {
  return on ? "on" : "off";
}

void PrintModel(const InspectReport& r, std::ostream& out) {
  const ModelCard& card = r.card;
  out << "model " << card.name << "  (" << card.config_path << ")\n";
  Line(out, "architecture",
       card.architecture + " (" + card.model_type + "), " + std::string(NameOf(card.dtype)));
  std::string counts;
  for (LayerType type : card.DistinctLayerTypes()) {
    counts += (counts.empty() ? "" : " + ") + std::to_string(card.CountLayers(type)) + " " +
              std::string(NameOf(type));
  }
  Line(out, "layers", std::to_string(card.NumLayers()) + ": " + counts);
  Line(out, "layer pattern", LayerPattern(card));
  if (card.moe) {
    Line(out, "MoE",
         std::to_string(card.CountMoeLayers()) + " layers, " +
             std::to_string(card.moe->num_experts) + " experts, top-" +
             std::to_string(card.moe->experts_per_token));
  }
  Line(out, "profiling depth",
       std::to_string(card.ProfilingDepth()) + " layer(s) to reach every block type");
}

void PrintEngine(const InspectReport& r, std::ostream& out) {
  const ResolvedEngineConfig& e = r.engine;
  out << "engine\n";
  Line(out, "tensor parallel",
       std::to_string(e.tp) + " (KV heads per rank: " + std::to_string(r.layout.kv_heads_per_rank) +
           ")");
  Line(out, "prefix caching",
       OnOff(e.prefix_caching) + (e.prefix_caching_defaulted ? " (model default)" : ""));
  Line(out, "chunked prefill", OnOff(e.chunked_prefill));
  Line(out, "async scheduling", OnOff(e.async_scheduling));
  Line(out, "max_model_len", WithCommas(e.max_model_len));
  std::string budget_note;
  if (e.budget_defaulted) {
    budget_note = e.large_gpu_assumed ? " (default for a >= 70 GiB GPU; --hardware decides)"
                                      : " (default for this GPU)";
  }
  Line(out, "max_num_batched_tokens", WithCommas(e.max_num_batched_tokens) + budget_note);
  Line(out, "max_num_seqs", WithCommas(e.max_num_seqs));
  Line(out, "long prefill threshold",
       e.long_prefill_token_threshold == 0 ? "off" : WithCommas(e.long_prefill_token_threshold));
  Line(out, "speculative decoding", Describe(e.speculative));
}

void PrintCacheShapes(const InspectReport& r, std::ostream& out) {
  const KvCacheLayout& l = r.layout;
  out << "attention KV cache (" << NameOf(r.engine.kv_dtype) << ")\n";
  Line(out, "page bytes per token",
       Bytes(l.attn_bytes_per_token_per_layer) + " per layer per rank");
  Line(out, "KV bytes per token",
       Bytes(l.kv_bytes_per_token_model) + " model, " + Bytes(l.kv_bytes_per_token_rank) +
           " per rank");
  if (l.draft_attention_layers > 0) {
    // vLLM gives the MTP layer a KV cache of its own, in the target's attention group.
    Line(out, "with the MTP layer",
         Bytes(l.KvBytesPerTokenRankWithDraft()) + " per rank (+" +
             Bytes(l.draft_kv_bytes_per_token_rank) + " for " +
             std::to_string(l.draft_attention_layers) + " MTP attention layer" +
             (l.draft_attention_layers == 1 ? "" : "s") + ")");
  }
  if (!l.gdn) return;
  const GdnStateShape& g = *l.gdn;
  const int gdn_layers = r.card.CountLayers(LayerType::kLinearAttention);
  out << "GDN state (per sequence, per layer, per rank)\n";
  Line(out, "conv state",
       Shape(g.conv) + " " + std::string(NameOf(g.conv_dtype)) + " = " + Bytes(g.ConvBytes()));
  Line(out, "ssm state",
       Shape(g.ssm) + " " + std::string(NameOf(g.ssm_dtype)) + " = " + Bytes(g.SsmBytes()));
  Line(out, "mamba page",
       Bytes(l.mamba_page_bytes) + " unpadded, " + Bytes(l.mamba_page_padded_bytes) + " padded");
  Line(out, "state per sequence",
       Bytes(l.state_bytes_per_sequence) + " (" + DecimalBytes(l.state_bytes_per_sequence) + ", " +
           BinaryBytes(l.state_bytes_per_sequence) + ") over " + std::to_string(gdn_layers) +
           " GDN layers, unpadded");
}

void PrintBlocks(const InspectReport& r, std::ostream& out) {
  const KvCacheLayout& l = r.layout;
  out << "blocks\n";
  std::string note;
  if (l.block_size_overridden()) {
    note = " (overrides the requested " + std::to_string(l.requested_block_size) + ")";
  } else if (!l.block_size_given) {
    note = " (backend default)";
  }
  Line(out, "block size", std::to_string(l.block_size) + note);
  if (l.gdn) {
    Line(out, "mamba cache mode",
         std::string(NameOf(l.mamba_mode)) + "; a state page stands for " +
             WithCommas(l.mamba_block_tokens) + " tokens");
  }
  Line(out, "KV-cache groups",
       std::to_string(l.groups.size()) + " of " + std::to_string(l.group_size) + " layers (" +
           std::to_string(l.AttentionGroups()) + " attention, " + std::to_string(l.GdnGroups()) +
           " GDN)");
  for (std::size_t i = 0; i < l.groups.size(); ++i) {
    const bool has_mtp = !l.groups[i].layers.empty() &&
                         l.groups[i].layers.back() >= r.card.NumLayers();  // numbered last
    Line(out, "  group " + std::to_string(i),
         std::string(NameOf(l.groups[i].type)) + " layers " + LayerList(l.groups[i].layers) +
             (has_mtp ? " (from " + std::to_string(r.card.NumLayers()) + ": MTP)" : ""));
  }
  Line(out, "pool block",
       Bytes(l.pool_block_bytes) + " (" + std::to_string(l.group_size) + " pages of " +
           Bytes(l.page_bytes) + ")");
  const int64_t len = l.max_model_len;
  const int64_t attention_blocks = l.AttentionGroups() * ((len + l.block_size - 1) / l.block_size);
  for (MambaCacheMode mode : {MambaCacheMode::kNone, MambaCacheMode::kAlign}) {
    if (!l.gdn && mode == MambaCacheMode::kAlign) break;
    std::string detail = std::to_string(attention_blocks) + " attention";
    if (l.gdn) detail += " + " + std::to_string(l.StateBlocksPerRequest(mode)) + " state";
    Line(out, std::string("per request, mode ") + std::string(l.gdn ? NameOf(mode) : "-"),
         WithCommas(l.BlocksPerRequest(len, mode)) + " blocks at " + WithCommas(len) + " tokens (" +
             detail + ")" + (mode == l.mamba_mode ? "  <- this engine" : ""));
  }
  if (l.gdn) {
    const int gdn_layers = r.card.CountLayers(LayerType::kLinearAttention);
    const int64_t pages = l.StateBlocksPerRequest(l.mamba_mode) * l.group_size;
    Line(out, "state per request",
         std::to_string(l.StateBlocksPerRequest(l.mamba_mode)) + " pool blocks (" +
             std::to_string(gdn_layers) + " GDN layers x " + std::to_string(pages / gdn_layers) +
             " pages = " + std::to_string(pages) + " pages, " + std::string(NameOf(l.mamba_mode)) +
             " mode)");
  }
}

void PrintMemory(const InspectReport& r, std::ostream& out) {
  out << "memory\n";
  if (!r.memory) {
    Line(out, "KV-cache memory",
         "not given (--kv-cache-memory-bytes, or --hardware with --gpu-memory-utilization)");
    return;
  }
  const KvMemory& m = *r.memory;
  if (m.from_hardware) {
    const WeightCount& w = m.weights;
    Line(out, "GPU memory",
         m.hardware + ": " + Bytes(m.gpu_memory_bytes) + " (" + BinaryBytes(m.gpu_memory_bytes) +
             ") x " + Fixed(m.gpu_memory_utilization, 2));
    std::string weights =
        Fixed(static_cast<double>(w.text_params_per_rank) / 1e9, 2) + "B text params";
    if (w.vision_params_per_rank > 0) {
      weights +=
          " + " + Fixed(static_cast<double>(w.vision_params_per_rank) / 1e9, 2) + "B vision params";
    }
    std::string storage = std::string(NameOf(r.card.dtype));
    if (w.quantized_params_per_rank > 0) {
      storage += "; " + Fixed(static_cast<double>(w.quantized_params_per_rank) / 1e9, 2) +
                 "B of them " + std::string(NameOf(r.engine.quantization.method)) + " " +
                 std::to_string(r.engine.quantization.weight_bits) + "-bit";
    }
    if (w.mtp_params_per_rank > 0) {
      weights +=
          " + " + Fixed(static_cast<double>(w.mtp_params_per_rank) / 1e9, 2) + "B MTP params";
    }
    Line(out, "weights per rank", Bytes(w.bytes_per_rank) + " (" + weights + ", " + storage + ")");
    if (w.mtp_params_per_rank > 0) {
      Line(out, "of them MTP",
           Bytes(w.mtp_bytes_per_rank) + " (" + BinaryBytes(w.mtp_bytes_per_rank) +
               "; its decoder layer, fc and norms; embedding and lm_head shared with the target)");
    }
    Line(out, "not subtracted", "activation peak, CUDA graphs, NCCL buffers (not guessed)");
  }
  Line(out, "KV-cache memory",
       Bytes(m.kv_cache_bytes) + " (" + BinaryBytes(m.kv_cache_bytes) + ")" +
           (m.from_hardware ? "" : " from --kv-cache-memory-bytes"));
  const PoolCapacity& p = *r.pool;
  Line(out, "pool blocks",
       WithCommas(p.num_blocks) + " (" + WithCommas(p.usable_blocks) +
           " usable after the null block)");
  Line(out, "max concurrency",
       Fixed(p.max_concurrency, 2) + " requests of " + WithCommas(r.layout.max_model_len) +
           " tokens (" + WithCommas(p.blocks_per_request) + " blocks each)");
  if (p.max_concurrency < 1.0) {
    Line(out, "warning", "one request at max_model_len does not fit; vLLM would refuse to start");
  }
}

void JsonModel(const InspectReport& r, JsonWriter& json) {
  const ModelCard& card = r.card;
  json.Key("model");
  json.BeginObject();
  json.Field("name", card.name);
  json.Field("config", card.config_path);
  json.Field("architecture", card.architecture);
  json.Field("model_type", card.model_type);
  json.Field("dtype", NameOf(card.dtype));
  json.Field("num_layers", card.NumLayers());
  json.Key("layer_counts");
  json.BeginObject();
  for (LayerType type : card.DistinctLayerTypes())
    json.Field(NameOf(type), card.CountLayers(type));
  json.EndObject();
  json.Field("layer_pattern", LayerPattern(card));
  json.Field("moe_layers", card.CountMoeLayers());
  json.Field("profiling_depth", card.ProfilingDepth());
  json.EndObject();
}

void JsonEngine(const InspectReport& r, JsonWriter& json) {
  const ResolvedEngineConfig& e = r.engine;
  json.Key("engine");
  json.BeginObject();
  json.Field("tensor_parallel_size", e.tp);
  json.Field("enable_prefix_caching", e.prefix_caching);
  json.Field("enable_chunked_prefill", e.chunked_prefill);
  json.Field("async_scheduling", e.async_scheduling);
  json.Field("max_model_len", e.max_model_len);
  json.Field("max_num_batched_tokens", e.max_num_batched_tokens);
  json.Field("max_num_seqs", e.max_num_seqs);
  json.Field("long_prefill_token_threshold", e.long_prefill_token_threshold);
  json.Field("num_speculative_tokens", e.num_spec);
  json.Key("speculative_acceptance");
  json.BeginArray();
  for (const double rate : e.speculative.acceptance)
    json.Value(rate);
  json.EndArray();
  json.Field("kv_cache_dtype", NameOf(e.kv_dtype));
  json.Field("mamba_cache_mode", NameOf(e.mamba_mode));
  json.EndObject();
}

void JsonCache(const InspectReport& r, JsonWriter& json) {
  const KvCacheLayout& l = r.layout;
  json.Key("attention");
  json.BeginObject();
  json.Field("kv_heads_per_rank", l.kv_heads_per_rank);
  json.Field("page_bytes_per_token_per_layer", l.attn_bytes_per_token_per_layer);
  json.Field("kv_bytes_per_token_model", l.kv_bytes_per_token_model);
  json.Field("kv_bytes_per_token_rank", l.kv_bytes_per_token_rank);
  json.Field("mtp_attention_layers", l.draft_attention_layers);
  json.Field("kv_bytes_per_token_rank_with_mtp", l.KvBytesPerTokenRankWithDraft());
  json.EndObject();
  json.Key("gdn");
  if (!l.gdn) {
    json.Null();
  } else {
    const GdnStateShape& g = *l.gdn;
    json.BeginObject();
    json.Field("layers", r.card.CountLayers(LayerType::kLinearAttention));
    json.Key("conv_state_shape");
    json.BeginArray();
    for (int64_t d : g.conv)
      json.Value(d);
    json.EndArray();
    json.Field("conv_dtype", NameOf(g.conv_dtype));
    json.Field("conv_bytes", g.ConvBytes());
    json.Key("ssm_state_shape");
    json.BeginArray();
    for (int64_t d : g.ssm)
      json.Value(d);
    json.EndArray();
    json.Field("ssm_dtype", NameOf(g.ssm_dtype));
    json.Field("ssm_bytes", g.SsmBytes());
    json.Field("mamba_page_bytes", l.mamba_page_bytes);
    json.Field("mamba_page_padded_bytes", l.mamba_page_padded_bytes);
    json.Field("state_bytes_per_sequence", l.state_bytes_per_sequence);
    json.Field("mamba_block_tokens", l.mamba_block_tokens);
    json.EndObject();
  }
  json.Key("block_size");
  json.BeginObject();
  json.Field("requested", l.requested_block_size);
  json.Field("requested_explicitly", l.block_size_given);
  json.Field("resolved", l.block_size);
  json.Field("overridden", l.block_size_overridden());
  json.EndObject();
}

void JsonBlocks(const InspectReport& r, JsonWriter& json) {
  const KvCacheLayout& l = r.layout;
  json.Key("kv_cache_groups");
  json.BeginObject();
  json.Field("group_size", l.group_size);
  json.Field("page_bytes", l.page_bytes);
  json.Field("pool_block_bytes", l.pool_block_bytes);
  json.Key("groups");
  json.BeginArray();
  for (const KvCacheGroup& group : l.groups) {
    json.BeginObject();
    json.Field("type", NameOf(group.type));
    json.Key("layers");
    json.BeginArray();
    for (int layer : group.layers)
      json.Value(layer);
    json.EndArray();
    json.EndObject();
  }
  json.EndArray();
  json.EndObject();
  json.Key("per_request");
  json.BeginObject();
  json.Field("tokens", l.max_model_len);
  json.Field("blocks_mode_none", l.BlocksPerRequest(l.max_model_len, MambaCacheMode::kNone));
  json.Field("blocks_mode_align", l.BlocksPerRequest(l.max_model_len, MambaCacheMode::kAlign));
  json.Field("state_blocks_mode_none", l.StateBlocksPerRequest(MambaCacheMode::kNone));
  json.Field("state_blocks_mode_align", l.StateBlocksPerRequest(MambaCacheMode::kAlign));
  json.Field("state_blocks", l.StateBlocksPerRequest(l.mamba_mode));
  json.EndObject();
}

void JsonMemory(const InspectReport& r, JsonWriter& json) {
  json.Key("memory");
  if (!r.memory) {
    json.Null();
    return;
  }
  const KvMemory& m = *r.memory;
  json.BeginObject();
  json.Field("source", m.from_hardware ? "hardware" : "kv_cache_memory_bytes");
  if (m.from_hardware) {
    json.Field("hardware", m.hardware);
    json.Field("gpu_memory_bytes", m.gpu_memory_bytes);
    json.Field("gpu_memory_utilization", m.gpu_memory_utilization);
    json.Field("text_params", m.weights.text_params);
    json.Field("vision_params", m.weights.vision_params);
    json.Field("text_params_per_rank", m.weights.text_params_per_rank);
    json.Field("vision_params_per_rank", m.weights.vision_params_per_rank);
    json.Field("quantized_params_per_rank", m.weights.quantized_params_per_rank);
    json.Field("mtp_params_per_rank", m.weights.mtp_params_per_rank);
    json.Field("mtp_weight_bytes_per_rank", m.weights.mtp_bytes_per_rank);
    json.Field("weight_bytes_per_rank", m.weights.bytes_per_rank);
    json.Field("not_subtracted", "activation peak, CUDA graphs, NCCL buffers");
  }
  json.Field("kv_cache_bytes", m.kv_cache_bytes);
  json.Field("num_blocks", r.pool->num_blocks);
  json.Field("usable_blocks", r.pool->usable_blocks);
  json.Field("blocks_per_request", r.pool->blocks_per_request);
  json.Field("max_concurrency", r.pool->max_concurrency);
  json.EndObject();
}

}  // namespace

void PrintInspectText(const InspectReport& report, std::ostream& out) {
  PrintModel(report, out);
  PrintEngine(report, out);
  PrintCacheShapes(report, out);
  PrintBlocks(report, out);
  PrintAttentionText(report.hardware, report.layout, report.engine, out);
  PrintMemory(report, out);
  if (report.decode_step) PrintDecodeStepText(*report.decode_step, out);
  if (report.data_parallel) PrintDpText(*report.data_parallel, out);
}

void PrintInspectJson(const InspectReport& report, std::ostream& out) {
  JsonWriter json(out);
  json.BeginObject();
  JsonModel(report, json);
  JsonEngine(report, json);
  JsonCache(report, json);
  JsonBlocks(report, json);
  JsonAttention(report.layout, report.engine, json);
  JsonMemory(report, json);
  JsonDecodeStep(report.decode_step, json);
  JsonDp(report.data_parallel, json);
  json.EndObject();
}

}  // namespace fleetsim
