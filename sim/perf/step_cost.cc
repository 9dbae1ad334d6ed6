#include "perf/step_cost.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

#include "core/check.h"
#include "core/input_error.h"
#include "core/sim_time.h"
#include "perf/bundle_format.h"
#include "perf/layer_kernels.h"

namespace fleetsim {
namespace {

// The kernel of the bundle that carries the spec's work: its own, else the fused one (a
// dense.csv or per_sequence.csv kernel).
std::optional<Kernel> CarriedBy(const KernelSpec& spec, const BundleTables& tables) {
  if (tables.Curve(spec.kernel) != nullptr) return spec.kernel;
  if (spec.fused_into && tables.Curve(*spec.fused_into) != nullptr) return spec.fused_into;
  return std::nullopt;
}

// The dense.csv tables a layer kind charges per layer, in order, each kernel `times` times.
// A needed kernel that neither the bundle nor its fused kernel has is refused, naming
// `kind_text` ("MLP").
std::vector<const GridTable*> DenseTablesOf(LayerKind kind, const BundleTables& tables,
                                            const Bundle& bundle, const ModelCard& card,
                                            const std::string& kind_text) {
  std::vector<const GridTable*> found;
  for (const KernelSpec& spec : KernelsOf(kind)) {
    if (FileOf(spec.kernel) != BundleFile::kDense) continue;
    if (const GridTable* table = tables.Curve(spec.kernel)) {
      found.insert(found.end(), static_cast<std::size_t>(spec.times), table);
    } else if (Needed(spec, card) && !CarriedBy(spec, tables)) {
      const std::string name(NameOf(spec.kernel));
      const std::string fused = spec.fused_into ? std::string(" (or its fused '") +
                                                      std::string(NameOf(*spec.fused_into)) + "')"
                                                : "";
      throw InputError(bundle.dir, 0, name,
                       "the bundle (" + TpFolder(tables.tp) + "/" +
                           std::string(FileName(BundleFile::kDense)) + ") lacks kernel '" + name +
                           "'" + fused + " that " + card.name + " needs for its " + kind_text +
                           " layers");
    }
  }
  return found;
}

void Require(bool present, const Bundle& bundle, const std::string& what, const std::string& why) {
  if (!present)
    throw InputError(bundle.dir, 0, what, "the bundle lacks " + what + ", needed " + why);
}

}  // namespace

std::vector<CoverageRow> Coverage(const ModelCard& card, const BundleTables& tables) {
  std::vector<CoverageRow> rows;
  for (const LayerKind kind : kLayerKinds) {
    if (LayerCount(card, kind) == 0) continue;
    const auto add = [&rows, kind](BundleFile file, std::string_view regime,
                                   std::string_view kernel, bool required, bool covered,
                                   std::string_view fused_into = "") {
      rows.push_back({std::string(NameOf(kind)), std::string(regime), std::string(kernel), required,
                      covered, std::string(fused_into), std::string(FileName(file))});
    };
    for (const KernelSpec& spec : KernelsOf(kind)) {
      const BundleFile file = FileOf(spec.kernel);
      const std::string_view name = NameOf(spec.kernel);
      switch (file) {
        case BundleFile::kDense:
        case BundleFile::kPerSequence: {
          const std::optional<Kernel> carrier = CarriedBy(spec, tables);
          add(file, "all", name, Needed(spec, card), carrier.has_value(),
              carrier && *carrier != spec.kernel ? NameOf(*carrier) : "");
          break;
        }
        case BundleFile::kAttention: {
          const AttentionTables& a = tables.attention;
          add(file, NameOf(Regime::kPrefill), name, Needed(spec, card), !a.prefill.empty());
          add(file, NameOf(Regime::kDecode), name, Needed(spec, card), !a.decode.empty());
          add(file, NameOf(Regime::kMixed), name, Needed(spec, card),
              !a.mixed.empty() || (!a.prefill.empty() && !a.decode.empty()));
          break;
        }
        case BundleFile::kMoe:
          add(file, "all", name, Needed(spec, card), tables.moe.has_value());
          break;
        case BundleFile::kLinearAttention:  // by the kernels the bundle has, below
        case BundleFile::kAllreduce:
        case BundleFile::kSkewFit:
          break;
      }
    }
    if (kind != LayerKind::kLinearAttention) continue;
    // A bundle has the historical regime kernels or the packed gdn_core, so each regime
    // needs one of the kernels it has, whichever they are.
    bool any[std::size(kRegimes)] = {};
    for (const auto& [kernel, t] : tables.linear_attention) {
      const GridTable* tables_by_regime[] = {&t.prefill, &t.decode, &t.mixed};
      for (const Regime regime : kRegimes) {
        const auto r = static_cast<std::size_t>(regime);
        if (tables_by_regime[r]->empty()) continue;
        add(BundleFile::kLinearAttention, NameOf(regime), kernel, false, true);
        any[r] = true;
      }
    }
    for (const Regime regime : kRegimes) {
      if (!any[static_cast<std::size_t>(regime)])
        add(BundleFile::kLinearAttention, NameOf(regime), "(any regime kernel)", true, false);
    }
  }
  return rows;
}

int64_t PaddedVocab(int64_t vocab) {
  return (vocab + 63) / 64 * 64;
}

StepCostModel::StepCostModel(const ModelCard& card, const Bundle& bundle, int tp,
                             CollectiveModel collectives, int64_t step_overhead_ns)
    : tables_(bundle.ForTp(tp)),
      collectives_(std::move(collectives)),
      step_overhead_ns_(step_overhead_ns),
      hidden_bytes_per_token_(card.hidden_size * BytesOf(card.dtype)),
      logits_bytes_per_sequence_(PaddedVocab(card.vocab_size) * BytesOf(card.dtype)),
      num_layers_(card.NumLayers()),
      tp_(tp) {
  bundle_dir_ = bundle.dir;
  full_layers_ = LayerCount(card, LayerKind::kFullAttention);
  gdn_layers_ = LayerCount(card, LayerKind::kLinearAttention);
  moe_layers_ = LayerCount(card, LayerKind::kMoe);
  dense_mlp_layers_ = LayerCount(card, LayerKind::kMlp);
  const std::string model = card.name;
  if (full_layers_ > 0)
    full_kernels_ =
        DenseTablesOf(LayerKind::kFullAttention, tables_, bundle, card, "full_attention");
  if (gdn_layers_ > 0) {
    gdn_kernels_ =
        DenseTablesOf(LayerKind::kLinearAttention, tables_, bundle, card, "linear_attention");
    Require(!tables_.linear_attention.empty(), bundle,
            std::string(FileName(BundleFile::kLinearAttention)), "for the GDN layers of " + model);
  }
  if (dense_mlp_layers_ > 0)
    mlp_kernels_ = DenseTablesOf(LayerKind::kMlp, tables_, bundle, card, "MLP");
  if (moe_layers_ > 0) {
    Require(tables_.moe.has_value(), bundle, std::string(FileName(BundleFile::kMoe)),
            "for the MoE layers of " + model);
    moe_experts_ = card.moe->num_experts;
    moe_top_k_ = card.moe->experts_per_token;
  }
  embedding_ = tables_.Curve(Kernel::kEmbedding);
  final_layernorm_ = tables_.Curve(Kernel::kFinalLayernorm);
  for (const Kernel kernel : {Kernel::kEmbedding, Kernel::kFinalLayernorm}) {
    Require(tables_.Curve(kernel) != nullptr, bundle,
            "dense kernel '" + std::string(NameOf(kernel)) + "'", "once per step");
  }
  lm_head_ = tables_.Curve(Kernel::kLmHead);
  Require(lm_head_ != nullptr, bundle, "per_sequence kernel 'lm_head'", "per sampled sequence");
  sampler_ = tables_.Curve(Kernel::kSampler);
  has_sampler_ = sampler_ != nullptr;
  mtp_fc_ = tables_.Curve(Kernel::kMtpFc);
  shared_token_axis_ = true;
  for (const auto* kernels : {&full_kernels_, &gdn_kernels_, &mlp_kernels_}) {
    for (const GridTable* kernel : *kernels)
      shared_token_axis_ = shared_token_axis_ && kernel->axis(0) == embedding_->axis(0);
  }
  shared_token_axis_ = shared_token_axis_ && final_layernorm_->axis(0) == embedding_->axis(0);
}

double StepCostModel::AttentionAt(const BatchShape& batch, double kv) const {
  const AttentionTables& a = tables_.attention;
  const double chunk = static_cast<double>(batch.prefill_tokens());
  const double key = PrefillKeyCoordinate(batch);
  const double n = static_cast<double>(batch.num_decodes());
  if (batch.num_prefills() == 0) return a.decode.Lookup({n, kv});
  if (batch.num_decodes() == 0) return a.prefill.Lookup({chunk, key});
  if (a.mixed.empty()) return a.prefill.Lookup({chunk, key}) + a.decode.Lookup({n, kv});
  return a.mixed.Lookup({chunk, key, n, kv});
}

double StepCostModel::PrefillKeyCoordinate(const BatchShape& batch) const {
  const double chunk = static_cast<double>(batch.prefill_tokens());
  return tables_.attention.legacy_kv_prefill ? std::max(0.0, batch.prefill_key() - chunk / 2)
                                             : batch.prefill_key();
}

// The uniform batch at the mean context, moved toward the uniform batch at the longest
// context by the bundle's alpha for this batch's bucket (perf/skew_fit.h), as LLMServingSim
// does: its bucket from the floored mean, as it computes it, the lookups at fleetsim's
// exact mean.
double StepCostModel::AttentionUs(const BatchShape& batch) const {
  return SkewedAttentionUs(batch, AttentionAt(batch, batch.mean_decode_context()));
}

std::optional<StepCostModel::SkewCoordinates> StepCostModel::SkewCoordinatesOf(
    int64_t decodes, int64_t context_sum, int64_t context_min, int64_t context_max) {
  if (decodes <= 1) return std::nullopt;
  const auto lo = static_cast<double>(context_min);
  const auto hi = static_cast<double>(context_max);
  // BatchShape::mean_decode_context, floored.
  const double floored_mean =
      std::floor(static_cast<double>(context_sum) / static_cast<double>(decodes));
  if (hi == floored_mean || hi <= lo) return std::nullopt;
  return SkewCoordinates{(floored_mean - lo) / (hi - lo), hi};
}

std::optional<uint64_t> StepCostModel::SkewBucket(const BatchShape& batch) const {
  if (!tables_.skew) return std::nullopt;
  const std::optional<SkewCoordinates> at =
      SkewCoordinatesOf(batch.num_decodes(), batch.decode_context_sum(), batch.min_decode_context(),
                        batch.max_decode_context());
  if (!at) return std::nullopt;
  return tables_.skew->BucketFor(batch.prefill_tokens(), batch.num_decodes(), at->rate, at->longest,
                                 PrefillKeyCoordinate(batch));
}

double StepCostModel::Skewed(double t_mean, double alpha, double t_max) {
  if (t_max <= t_mean) return t_mean;
  return t_mean + alpha * (t_max - t_mean);
}

double StepCostModel::SkewedAttentionUs(const BatchShape& batch, double t_mean) const {
  const std::optional<uint64_t> bucket = SkewBucket(batch);
  const double alpha = bucket ? tables_.skew->AlphaIn(*bucket) : 0;
  if (alpha == 0) return t_mean;
  return Skewed(t_mean, alpha, AttentionAt(batch, static_cast<double>(batch.max_decode_context())));
}

double StepCostModel::GdnRegimeUs(const BatchShape& batch) const {
  const double chunks = static_cast<double>(batch.gdn_scan_chunks());
  const double n = static_cast<double>(batch.gdn_decode_tokens());
  double us = 0;
  for (const auto& [kernel, t] : tables_.linear_attention) {
    if (batch.gdn_prefills() > 0 && batch.gdn_decode_tokens() > 0) {
      if (!t.mixed.empty()) us += t.mixed.Lookup({chunks, n});
    } else if (batch.gdn_prefills() > 0) {
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
  return Compose(batch, batch.total_tokens(), true);
}

StepCost StepCostModel::CostOutsideMoe(const BatchShape& batch, int64_t run_tokens) const {
  return Compose(batch, std::max(run_tokens, batch.total_tokens()), false);
}

double StepCostModel::ExpertShardMoeUs(double gathered_tokens, int dp) const {
  if (moe_layers_ == 0 || gathered_tokens <= 0) return 0;
  // A rank of the DP x TP expert-parallel group holds experts / (DP x TP) whole experts
  // and runs them on every token the dispatch gathered (vLLM's fused MoE with an
  // expert_map: tokens routed elsewhere are masked). The table prices one rank of a TP-tp
  // engine, whose experts are 1/tp wide: the shard's token-expert pairs (gathered x top-k
  // / (DP x TP) whole-width) are the table's at gathered / DP tokens, and its weights (the
  // distinct local experts reached, whole width) are tp times as many 1/tp-wide ones.
  // Routing is taken as uniform over the experts (no EPLB; vLLM's default linear
  // placement), so each rank expects the same share.
  const double e = moe_experts_;
  const double shard = e / (static_cast<double>(dp) * tp_);
  const double reached = 1.0 - std::pow(1.0 - static_cast<double>(moe_top_k_) / e, gathered_tokens);
  const double activated = std::min(e, shard * reached * tp_);
  return moe_layers_ * tables_.moe->Lookup({gathered_tokens / dp, activated});
}

template <typename ReadAllreduce>
void StepCostModel::AddCollectives(int64_t tokens, int64_t logits_rows,
                                   ReadAllreduce&& read_allreduce, StepCost& cost) const {
  if (tp_ <= 1) return;
  cost.allreduces = 2 * num_layers_ + 1;
  cost.allreduce_bytes = tokens * hidden_bytes_per_token_;
  const double each_us =
      tables_.allreduce
          ? read_allreduce(*tables_.allreduce, static_cast<double>(cost.allreduce_bytes))
          : collectives_.AllReduceUs(cost.allreduce_bytes);
  cost.allreduce_ns = std::llround(cost.allreduces * each_us * 1000.0);
  if (logits_rows > 0) {
    cost.logits_gather_bytes = logits_rows * logits_bytes_per_sequence_;
    cost.logits_gather_ns =
        std::llround(collectives_.NcclUs(NcclCollective::kAllGather,
                                         static_cast<double>(cost.logits_gather_bytes)) *
                     1000.0);
  }
}

StepCost StepCostModel::Compose(const BatchShape& batch, int64_t run_tokens, bool with_moe) const {
  const auto tokens = static_cast<double>(run_tokens);
  const GridTable::Position at = embedding_->Locate(tokens);
  double us = embedding_->LookupAt(at) + TokenUs(*final_layernorm_, tokens, at);
  // A batch of no sequences (a DP rank's dummy forward, padded to the others' tokens) runs
  // no attention: vLLM gives it no attention metadata.
  const bool sequences = batch.num_sequences() > 0;
  if (full_layers_ > 0) {
    us +=
        full_layers_ * PlusTokenUs(sequences ? AttentionUs(batch) : 0.0, full_kernels_, tokens, at);
  }
  if (gdn_layers_ > 0) {
    us += gdn_layers_ * PlusTokenUs(sequences ? GdnRegimeUs(batch) : 0.0, gdn_kernels_, tokens, at);
  }
  if (dense_mlp_layers_ > 0) us += dense_mlp_layers_ * PlusTokenUs(0, mlp_kernels_, tokens, at);
  if (with_moe && moe_layers_ > 0) us += moe_layers_ * MoeUs(tokens);
  if (batch.logits_rows() > 0) {
    const auto rows = static_cast<double>(batch.logits_rows());
    us += lm_head_->Lookup({rows});
    if (sampler_) us += sampler_->Lookup({rows});
  }

  StepCost cost;
  cost.compute_ns = std::llround(us * 1000.0);
  AddCollectives(
      run_tokens, batch.logits_rows(),
      [](const GridTable& table, double bytes) { return table.Lookup({bytes}); }, cost);
  if (draft_passes_ > 0 && batch.num_sequences() > 0) cost.draft_ns = DraftNs(batch);
  cost.total_ns = cost.compute_ns + cost.allreduce_ns + cost.logits_gather_ns + cost.draft_ns +
                  step_overhead_ns_;
  return cost;
}

void StepCostModel::EnableMtpDrafting(int num_speculative_tokens) {
  if (num_speculative_tokens > 0 && mtp_fc_ == nullptr) {
    throw InputError(bundle_dir_, 0, std::string(NameOf(Kernel::kMtpFc)),
                     "the bundle (" + TpFolder(tables_.tp) + "/" +
                         std::string(FileName(BundleFile::kDense)) + ") lacks kernel '" +
                         std::string(NameOf(Kernel::kMtpFc)) +
                         "', the MTP module's fc projection that MTP speculation runs in every "
                         "draft pass; rebuild the bundle (the analytic and kernel-db builders "
                         "write it for models with MTP layers)");
  }
  draft_passes_ = num_speculative_tokens;
}

double StepCostModel::DraftPassUs(const BatchShape& attention, double tokens,
                                  double sequences) const {
  const GridTable::Position at = embedding_->Locate(tokens);
  double us = embedding_->LookupAt(at) + TokenUs(*final_layernorm_, tokens, at);
  // qwen3_5_mtp.py: the embedding and the target's hidden state, each normed, are
  // concatenated and projected by fc before the decoder layer. (Its table may have its own
  // token axis: read it directly.)
  us += mtp_fc_->Lookup({tokens});
  us += PlusTokenUs(AttentionUs(attention), full_kernels_, tokens, at);
  // The MTP layer's MLP is the model's kind: a MoE block for MoE models (Qwen3.5-35B-A3B).
  us += moe_layers_ > 0 ? MoeUs(tokens) : PlusTokenUs(0, mlp_kernels_, tokens, at);
  return us + lm_head_->Lookup({sequences});
}

double StepCostModel::DraftCollectivesUs(int64_t tokens, int64_t sequences) const {
  if (tp_ <= 1) return 0;
  // As the target's layers: one after attention, one after the MLP, one in the embedding.
  const int64_t bytes = tokens * hidden_bytes_per_token_;
  const double each_us = tables_.allreduce ? tables_.allreduce->Lookup({static_cast<double>(bytes)})
                                           : collectives_.AllReduceUs(bytes);
  // fc is a ColumnParallelLinear with gather_output=True: its hidden / tp outputs per rank
  // are all-gathered into the whole hidden state (tensor_model_parallel_all_gather, NCCL).
  return 3 * each_us + collectives_.NcclUs(NcclCollective::kAllGather, static_cast<double>(bytes)) +
         collectives_.NcclUs(NcclCollective::kAllGather,
                             static_cast<double>(sequences * logits_bytes_per_sequence_));
}

int64_t StepCostModel::DraftNs(const BatchShape& batch) const {
  // Pass 0 (vLLM: the draft model over the target's scheduled tokens, sampling at each
  // sequence's last one) sees the step's own batch; pass j >= 1 feeds one draft token per
  // sequence at its next position, over the tokens cached after the step plus j - 1 drafts.
  const int64_t sequences = batch.num_sequences();
  const auto rows = static_cast<double>(sequences);
  double us = DraftPassUs(batch, static_cast<double>(batch.total_tokens()), rows) +
              DraftCollectivesUs(batch.total_tokens(), sequences);
  for (int j = 1; j < draft_passes_; ++j) {
    BatchShape pass;
    pass.AddDecodes(sequences, batch.cached_after_sum() + sequences * (j - 1),
                    batch.cached_after_min() + j - 1, batch.cached_after_max() + j - 1);
    us += DraftPassUs(pass, rows, rows) + DraftCollectivesUs(sequences, sequences);
  }
  return std::llround(us * 1000.0);
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

void StepCostModel::PrepareDecodeRuns(int64_t max_decodes) {
  decode_prices_.clear();
  decode_prices_.reserve(static_cast<std::size_t>(std::max<int64_t>(max_decodes, 0)));
  for (int64_t decodes = 1; decodes <= max_decodes; ++decodes)
    decode_prices_.push_back(PriceDecodes(decodes));
}

StepCostModel::DecodePrices StepCostModel::PriceDecodes(int64_t decodes) const {
  // Its shortcuts price the target alone; speculative steps go through Cost one by one.
  FLEETSIM_CHECK(draft_passes_ == 0, "no decode runs with MTP drafting");
  FLEETSIM_CHECK(decodes >= 1, "a decode run has decodes");
  DecodePrices prices;
  prices.decodes = decodes;
  // The terms of Cost for this batch, read without counting; a read outside its grid is
  // counted at every step, as Cost would.
  const auto tokens = static_cast<double>(decodes);
  const auto read = [&prices](const GridTable& table, std::span<const GridTable::Position> at) {
    for (const GridTable::Position& p : at) {
      if (p.outside) {
        prices.outside.push_back(&table);
        break;
      }
    }
    return table.ReadAt(at);
  };
  const auto read1 = [&read](const GridTable& table, double x) {
    const GridTable::Position at = table.Locate(x);
    return read(table, std::span(&at, 1));
  };
  const GridTable::Position token_at = embedding_->Locate(tokens);
  const auto token_us = [&](const GridTable& kernel) {
    return shared_token_axis_ ? read(kernel, std::span(&token_at, 1)) : read1(kernel, tokens);
  };
  const auto plus_token_us = [&](double start, const std::vector<const GridTable*>& kernels) {
    for (const GridTable* kernel : kernels)
      start += token_us(*kernel);
    return start;
  };
  prices.head_us = read(*embedding_, std::span(&token_at, 1)) + token_us(*final_layernorm_);
  for (const GridTable* kernel : full_kernels_)
    prices.full_kernels_us.push_back(token_us(*kernel));
  if (gdn_layers_ > 0) {
    double regime = 0;  // GdnRegimeUs of a decode-only batch
    for (const auto& [kernel, t] : tables_.linear_attention) {
      if (!t.decode.empty()) regime += read1(t.decode, tokens);
    }
    prices.tail_us.push_back(gdn_layers_ * plus_token_us(regime, gdn_kernels_));
  }
  if (dense_mlp_layers_ > 0)
    prices.tail_us.push_back(dense_mlp_layers_ * plus_token_us(0, mlp_kernels_));
  if (moe_layers_ > 0) {  // MoeUs
    const double e = moe_experts_;
    const double activated =
        std::min(e, e * (1.0 - std::pow(1.0 - static_cast<double>(moe_top_k_) / e, tokens)));
    const GridTable::Position at[] = {tables_.moe->LocateOn(0, tokens),
                                      tables_.moe->LocateOn(1, activated)};
    prices.tail_us.push_back(moe_layers_ * read(*tables_.moe, at));
  }
  prices.tail_us.push_back(read1(*lm_head_, tokens));  // every decode samples
  if (sampler_) prices.tail_us.push_back(read1(*sampler_, tokens));
  if (full_layers_ > 0) {
    prices.decodes_at = tables_.attention.decode.LocateOn(0, tokens);
    prices.attention = GridTable::AlongSecond(tables_.attention.decode, prices.decodes_at);
  }

  StepCost after;
  AddCollectives(decodes, decodes, read1, after);
  prices.after_compute_ns = after.allreduce_ns + after.logits_gather_ns + step_overhead_ns_;
  return prices;
}

void StepCostModel::DecodeRun::SetDecodes(int64_t decodes) {
  if (decodes == this->decodes()) return;
  const std::vector<DecodePrices>& prepared = model_->decode_prices_;
  if (decodes >= 1 && decodes <= static_cast<int64_t>(prepared.size())) {
    prices_ = &prepared[static_cast<std::size_t>(decodes - 1)];
  } else {
    own_prices_ = std::make_unique<DecodePrices>(model_->PriceDecodes(decodes));
    prices_ = own_prices_.get();
  }
  // The skew bucket's batch-size bin may differ; the context positions stay good hints.
  rate_span_ = longest_span_ = {};
  last_ = {};
}

double StepCostModel::DecodeRun::SkewAlpha(int64_t context_sum, int64_t context_min,
                                           int64_t context_max) {
  const std::optional<SkewFit>& skew = model_->tables_.skew;
  if (!skew) return 0;
  // A step k later with the same decodes, each context k longer (a run between its
  // events), has the same skew rate: the floored mean, the shortest and the longest all
  // moved by k, which leaves their differences -- whole numbers, exact as doubles below
  // 2^52 -- and so the rate, to the bit. Only the longest can leave its bin.
  const int64_t k = context_max - last_.max;
  const bool shifted = last_.valid && context_min - last_.min == k &&
                       context_sum - last_.sum == k * prices_->decodes;
  last_ = {context_sum, context_min, context_max, true, last_.corrected};
  if (shifted) {
    if (!last_.corrected) return 0;
    if (longest_span_.Holds(static_cast<double>(context_max))) return skew_alpha_;
  }
  const std::optional<SkewCoordinates> at =
      SkewCoordinatesOf(prices_->decodes, context_sum, context_min, context_max);
  last_.corrected = at.has_value();
  if (!at) return 0;
  // The bins BucketFor puts these in.
  const double rate = std::clamp(at->rate, 0.0, 1.0);
  const double longest = std::trunc(at->longest);
  if (!rate_span_.Holds(rate) || !longest_span_.Holds(longest)) {
    // The batch size, prefill and prefill key are the run's: only these two bins move.
    BatchShape batch;
    batch.AddDecodes(prices_->decodes, context_sum, context_min, context_max);
    skew_alpha_ = skew->AlphaIn(*model_->SkewBucket(batch));
    rate_span_ = skew->skew_rate.SpanOf(rate);
    longest_span_ = skew->kv_big.SpanOf(longest);
  }
  return skew_alpha_;
}

int64_t StepCostModel::DecodeRun::TotalNs(int64_t context_sum, int64_t context_min,
                                          int64_t context_max) {
  const DecodePrices& prices = *prices_;
  for (const GridTable* table : prices.outside)
    table->CountOutOfGrid(1);
  double us = prices.head_us;
  if (model_->full_layers_ > 0) {
    const GridTable::AlongSecond& attention = prices.attention;
    context_at_ = attention.Locate(
        static_cast<double>(context_sum) / static_cast<double>(prices.decodes), context_at_);
    // Mixed contexts add the skew correction, which reads the table at the longest too
    // (SkewedAttentionUs, with the longest context's position kept from step to step).
    double layer = attention.LookupAt(context_at_);
    const double alpha = SkewAlpha(context_sum, context_min, context_max);
    if (alpha != 0) {
      longest_at_ = attention.Locate(static_cast<double>(context_max), longest_at_);
      layer = Skewed(layer, alpha, attention.LookupAt(longest_at_));
    }
    for (const double kernel_us : prices.full_kernels_us)
      layer += kernel_us;
    us += model_->full_layers_ * layer;
  }
  for (const double term : prices.tail_us)
    us += term;
  return RoundHalfAway(us * 1000.0) + prices.after_compute_ns;
}

}  // namespace fleetsim
