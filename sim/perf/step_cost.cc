#include "perf/step_cost.h"

#include <algorithm>
#include <cmath>

#include "core/input_error.h"

namespace fleetsim {
namespace {

// Which dense-table kernels each layer kind charges. A needed kernel must be in the bundle,
// either under its own name or inside the fused kernel named by `fused_into` (Qwen3.5's one
// Triton kernel for q/k norm, rope and the output gate); the others are glue a profile may
// or may not bind, charged when present.
enum class Need { kAlways, kIfQkNorm, kIfPresent };
struct KernelSpec {
  const char* name;
  int times;
  Need need;
  const char* fused_into = nullptr;
};

constexpr KernelSpec kFullAttentionKernels[] = {{"layernorm", 2, Need::kAlways},
                                                {"qkv_proj", 1, Need::kAlways},
                                                {"qk_norm", 1, Need::kIfQkNorm, "qk_norm_rope"},
                                                {"rotary_emb", 1, Need::kAlways, "qk_norm_rope"},
                                                {"qk_norm_rope", 1, Need::kIfPresent},
                                                {"attn_glue", 1, Need::kIfPresent},
                                                {"o_proj", 1, Need::kAlways}};
constexpr KernelSpec kGdnKernels[] = {{"layernorm", 2, Need::kAlways},
                                      {"gdn_in_proj", 1, Need::kAlways},
                                      {"gdn_glue", 1, Need::kIfPresent},
                                      {"gdn_norm", 1, Need::kIfPresent},
                                      {"gdn_out_proj", 1, Need::kAlways}};
constexpr KernelSpec kMlpKernels[] = {{"gate_up_proj", 1, Need::kAlways},
                                      {"act_fn", 1, Need::kAlways},
                                      {"down_proj", 1, Need::kAlways}};

bool Needed(const KernelSpec& spec, const ModelCard& card) {
  return spec.need == Need::kAlways || (spec.need == Need::kIfQkNorm && card.attention.qk_norm);
}

// The kernel of the bundle that carries the spec's work: its own, else the fused one, else "".
std::string CarriedBy(const KernelSpec& spec, const BundleTables& tables) {
  if (tables.dense.contains(spec.name)) return spec.name;
  if (spec.fused_into != nullptr && tables.dense.contains(spec.fused_into)) return spec.fused_into;
  return "";
}

template <std::size_t N>
std::vector<std::string> Resolve(const BundleTables& tables, const KernelSpec (&specs)[N],
                                 const Bundle& bundle, const ModelCard& card, const char* kind) {
  std::vector<std::string> kernels;
  for (const KernelSpec& spec : specs) {
    if (tables.dense.contains(spec.name)) {
      for (int i = 0; i < spec.times; ++i)
        kernels.emplace_back(spec.name);
    } else if (Needed(spec, card) && CarriedBy(spec, tables).empty()) {
      const std::string fused = spec.fused_into == nullptr
                                    ? ""
                                    : std::string(" (or its fused '") + spec.fused_into + "')";
      throw InputError(bundle.dir, 0, spec.name,
                       "the bundle (tp" + std::to_string(tables.tp) + "/dense.csv) lacks kernel '" +
                           spec.name + "'" + fused + " that " + card.name + " needs for its " +
                           kind + " layers");
    }
  }
  return kernels;
}

void Require(bool present, const Bundle& bundle, const std::string& what, const std::string& why) {
  if (!present)
    throw InputError(bundle.dir, 0, what, "the bundle lacks " + what + ", needed " + why);
}

}  // namespace

std::vector<CoverageRow> Coverage(const ModelCard& card, const BundleTables& tables) {
  std::vector<CoverageRow> rows;
  const auto add = [&rows](const char* table, const char* block, const char* regime,
                           const std::string& kernel, bool required, bool covered,
                           const std::string& fused_into = "") {
    rows.push_back({block, regime, kernel, required, covered, fused_into, table});
  };
  auto dense = [&](const char* block, const auto& specs) {
    for (const KernelSpec& spec : specs) {
      const std::string carrier = CarriedBy(spec, tables);
      add("dense.csv", block, "all", spec.name, Needed(spec, card), !carrier.empty(),
          carrier == spec.name ? "" : carrier);
    }
  };
  dense("head", std::initializer_list<KernelSpec>{{"embedding", 1, Need::kAlways},
                                                  {"final_layernorm", 1, Need::kAlways}});
  add("per_sequence.csv", "head", "all", "lm_head", true, tables.per_sequence.contains("lm_head"));
  add("per_sequence.csv", "head", "all", "sampler", false, tables.per_sequence.contains("sampler"));
  if (card.CountLayers(LayerType::kFullAttention) > 0) {
    dense("full_attention", kFullAttentionKernels);
    const AttentionTables& a = tables.attention;
    add("attention.csv", "full_attention", "prefill", "attention", true, !a.prefill.empty());
    add("attention.csv", "full_attention", "decode", "attention", true, !a.decode.empty());
    add("attention.csv", "full_attention", "mixed", "attention", true,
        !a.mixed.empty() || (!a.prefill.empty() && !a.decode.empty()));
  }
  if (card.IsHybrid()) {
    dense("linear_attention", kGdnKernels);
    const char* regimes[3] = {"prefill", "decode", "mixed"};
    bool any[3] = {false, false, false};
    for (const auto& [kernel, t] : tables.linear_attention) {
      const GridTable* tables_by_regime[3] = {&t.prefill, &t.decode, &t.mixed};
      for (int r = 0; r < 3; ++r) {
        if (tables_by_regime[r]->empty()) continue;
        add("linear_attention.csv", "linear_attention", regimes[r], kernel, false, true);
        any[r] = true;
      }
    }
    for (int r = 0; r < 3; ++r) {
      if (!any[r])
        add("linear_attention.csv", "linear_attention", regimes[r], "(any regime kernel)", true,
            false);
    }
  }
  if (card.CountMoeLayers() < card.NumLayers()) dense("mlp", kMlpKernels);
  if (card.CountMoeLayers() > 0) add("moe.csv", "moe", "all", "moe", true, tables.moe.has_value());
  return rows;
}

StepCostModel::StepCostModel(const ModelCard& card, const Bundle& bundle, int tp,
                             AllReduceModel allreduce, int64_t step_overhead_ns)
    : tables_(bundle.ForTp(tp)),
      allreduce_(allreduce),
      step_overhead_ns_(step_overhead_ns),
      hidden_bytes_per_token_(card.hidden_size * BytesOf(card.dtype)),
      num_layers_(card.NumLayers()),
      tp_(tp) {
  full_layers_ = card.CountLayers(LayerType::kFullAttention);
  gdn_layers_ = card.CountLayers(LayerType::kLinearAttention);
  moe_layers_ = card.CountMoeLayers();
  dense_mlp_layers_ = card.NumLayers() - moe_layers_;
  const std::string model = card.name;
  const auto tables_of = [this](const std::vector<std::string>& names) {
    std::vector<const GridTable*> found;
    for (const std::string& name : names)
      found.push_back(&tables_.dense.at(name));
    return found;
  };
  if (full_layers_ > 0)
    full_kernels_ =
        tables_of(Resolve(tables_, kFullAttentionKernels, bundle, card, "full_attention"));
  if (gdn_layers_ > 0) {
    gdn_kernels_ = tables_of(Resolve(tables_, kGdnKernels, bundle, card, "linear_attention"));
    Require(!tables_.linear_attention.empty(), bundle, "linear_attention.csv",
            "for the GDN layers of " + model);
  }
  if (dense_mlp_layers_ > 0)
    mlp_kernels_ = tables_of(Resolve(tables_, kMlpKernels, bundle, card, "MLP"));
  if (moe_layers_ > 0) {
    Require(tables_.moe.has_value(), bundle, "moe.csv", "for the MoE layers of " + model);
    moe_experts_ = card.moe->num_experts;
    moe_top_k_ = card.moe->experts_per_token;
  }
  for (const char* kernel : {"embedding", "final_layernorm"}) {
    Require(tables_.dense.contains(kernel), bundle, std::string("dense kernel '") + kernel + "'",
            "once per step");
  }
  Require(tables_.per_sequence.contains("lm_head"), bundle, "per_sequence kernel 'lm_head'",
          "per sampled sequence");
  has_sampler_ = tables_.per_sequence.contains("sampler");
  embedding_ = &tables_.dense.at("embedding");
  final_layernorm_ = &tables_.dense.at("final_layernorm");
  shared_token_axis_ = true;
  for (const auto* kernels : {&full_kernels_, &gdn_kernels_, &mlp_kernels_}) {
    for (const GridTable* kernel : *kernels)
      shared_token_axis_ = shared_token_axis_ && kernel->axis(0) == embedding_->axis(0);
  }
  shared_token_axis_ = shared_token_axis_ && final_layernorm_->axis(0) == embedding_->axis(0);
  lm_head_ = &tables_.per_sequence.at("lm_head");
  if (has_sampler_) sampler_ = &tables_.per_sequence.at("sampler");
}

double StepCostModel::AttentionUs(const BatchShape& batch) const {
  const AttentionTables& a = tables_.attention;
  const double chunk = static_cast<double>(batch.prefill_tokens());
  const double key =
      a.legacy_kv_prefill ? std::max(0.0, batch.prefill_key() - chunk / 2) : batch.prefill_key();
  const double n = static_cast<double>(batch.num_decodes());
  const double kv = batch.mean_decode_context();
  if (batch.num_prefills() == 0) return a.decode.Lookup({n, kv});
  if (batch.num_decodes() == 0) return a.prefill.Lookup({chunk, key});
  if (a.mixed.empty()) return a.prefill.Lookup({chunk, key}) + a.decode.Lookup({n, kv});
  return a.mixed.Lookup({chunk, key, n, kv});
}

double StepCostModel::GdnRegimeUs(const BatchShape& batch) const {
  const double chunks = static_cast<double>(batch.gdn_scan_chunks());
  const double n = static_cast<double>(batch.num_decodes());
  double us = 0;
  for (const auto& [kernel, t] : tables_.linear_attention) {
    if (batch.num_prefills() > 0 && batch.num_decodes() > 0) {
      if (!t.mixed.empty()) us += t.mixed.Lookup({chunks, n});
    } else if (batch.num_prefills() > 0) {
      if (!t.prefill.empty()) us += t.prefill.Lookup({chunks});
    } else if (!t.decode.empty()) {
      us += t.decode.Lookup({n});
    }
  }
  return us;
}

double StepCostModel::MoeUs(double tokens) const {
  // Expected distinct experts reached by `tokens` tokens routed uniformly to top-k of E.
  const double e = moe_experts_;
  const double activated =
      std::min(e, e * (1.0 - std::pow(1.0 - static_cast<double>(moe_top_k_) / e, tokens)));
  return tables_.moe->Lookup({tokens, activated});
}

double StepCostModel::PlusTokenUs(double start, const std::vector<const GridTable*>& kernels,
                                  double tokens, const GridTable::Position& at) const {
  for (const GridTable* kernel : kernels)
    start += TokenUs(*kernel, tokens, at);
  return start;
}

StepCost StepCostModel::Cost(const BatchShape& batch) const {
  const auto tokens = static_cast<double>(batch.total_tokens());
  const GridTable::Position at = embedding_->Locate(tokens);
  double us = embedding_->LookupAt(at) + TokenUs(*final_layernorm_, tokens, at);
  if (full_layers_ > 0)
    us += full_layers_ * PlusTokenUs(AttentionUs(batch), full_kernels_, tokens, at);
  if (gdn_layers_ > 0)
    us += gdn_layers_ * PlusTokenUs(GdnRegimeUs(batch), gdn_kernels_, tokens, at);
  if (dense_mlp_layers_ > 0) us += dense_mlp_layers_ * PlusTokenUs(0, mlp_kernels_, tokens, at);
  if (moe_layers_ > 0) us += moe_layers_ * MoeUs(tokens);
  if (batch.sampled_sequences() > 0) {
    const auto sequences = static_cast<double>(batch.sampled_sequences());
    us += lm_head_->Lookup({sequences});
    if (sampler_) us += sampler_->Lookup({sequences});
  }

  StepCost cost;
  cost.compute_ns = std::llround(us * 1000.0);
  if (tp_ > 1) {
    cost.allreduces = 2 * num_layers_ + 1;
    cost.allreduce_bytes = batch.total_tokens() * hidden_bytes_per_token_;
    const double each_ns =
        tables_.allreduce
            ? tables_.allreduce->Lookup({static_cast<double>(cost.allreduce_bytes)}) * 1000.0
            : allreduce_.Nanoseconds(cost.allreduce_bytes);
    cost.allreduce_ns = std::llround(cost.allreduces * each_ns);
  }
  cost.total_ns = cost.compute_ns + cost.allreduce_ns + step_overhead_ns_;
  return cost;
}

int64_t StepCostModel::OutOfGridLookups() const {
  int64_t total = tables_.attention.prefill.out_of_grid_lookups() +
                  tables_.attention.decode.out_of_grid_lookups() +
                  tables_.attention.mixed.out_of_grid_lookups();
  for (const auto& [name, t] : tables_.dense)
    total += t.out_of_grid_lookups();
  for (const auto& [name, t] : tables_.per_sequence)
    total += t.out_of_grid_lookups();
  for (const auto& [name, t] : tables_.linear_attention) {
    total += t.prefill.out_of_grid_lookups() + t.decode.out_of_grid_lookups() +
             t.mixed.out_of_grid_lookups();
  }
  if (tables_.moe) total += tables_.moe->out_of_grid_lookups();
  if (tables_.allreduce) total += tables_.allreduce->out_of_grid_lookups();
  return total;
}

}  // namespace fleetsim
