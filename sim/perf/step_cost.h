// What one engine step costs, composed from a bundle in the order vLLM runs the model
// (ENGINE_SEMANTICS.md section 9):
//   embedding + final_layernorm                         dense table, step tokens
//   per full-attention layer: layernorm x2, qkv_proj, (qk_norm, rotary_emb | qk_norm_rope,
//     attn_glue), o_proj + the attention kernel         dense + attention tables
//     (decodes of mixed contexts: the bundle's skew correction, perf/skew_fit.h)
//   per GDN layer: layernorm x2, gdn_in_proj, gdn_glue, gdn_norm, gdn_out_proj + the regime
//     kernels of the batch (prefill-only, decode-only or mixed)   dense + linear_attention
//   per layer MLP: gate_up_proj, act_fn, down_proj, or the MoE block   dense / moe tables
//   lm_head + sampler per sampled sequence               per_sequence table
//   TP > 1: 2 x layers + 1 all-reduces of tokens x hidden x activation bytes (one after
//     each layer's attention or GDN mixer, one after its MLP or MoE block, one in the
//     vocab-parallel embedding), from the bundle's measured allreduce.csv when it has one,
//     else as vLLM runs them (collective.h: its custom all-reduce, symmetric memory or
//     NCCL); and the all-gather of the sampled sequences' logits from the vocab-parallel
//     lm_head (vLLM's LogitsProcessor._gather_logits: all-gather on CUDA), sequences x
//     vocabulary (padded to 64) x activation bytes, by NCCL
//   + a fixed per-step overhead (host-side scheduling and launch).
//   With MTP speculative decoding (EnableMtpDrafting, engine/speculative.h), the target's
//   spec decodes are priced as BatchShape says (1 + k queries each), and the draft module
//   runs k passes after it (vllm/v1/spec_decode/eagle.py, EagleProposer.propose): the first
//   over every token of the step, the others one token per sequence; a pass is one
//   full-attention decoder layer with the model's MLP or MoE block, the embedding, a norm
//   and the lm_head for one row per sequence, all from the same tables, and the MTP's fc
//   projection (2 x hidden -> hidden, the bundle's `mtp_fc` GEMM) over the pass's tokens
//   (plus, at TP > 1, 3 all-reduces of the pass's tokens, the all-gather of fc's output --
//   a ColumnParallelLinear with gather_output -- and the logits all-gather).
// Kernels a bundle lacks that the model needs are refused when the model is built; rows
// the model does not need (qk_norm for Llama) are not charged.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/model_card.h"
#include "perf/batch_shape.h"
#include "perf/bundle.h"
#include "perf/collective.h"

namespace fleetsim {

// vLLM pads the vocabulary of ParallelLMHead to a multiple of 64
// (vocab_parallel_embedding.py DEFAULT_VOCAB_PADDING_SIZE) before splitting it over ranks:
// the width of each sequence's gathered logits.
int64_t PaddedVocab(int64_t vocab);

struct StepCost {
  int64_t total_ns = 0;
  int64_t compute_ns = 0;
  int64_t allreduce_ns = 0;
  int allreduces = 0;
  int64_t allreduce_bytes = 0;  // each
  int64_t logits_gather_ns = 0;
  int64_t logits_gather_bytes = 0;
  int64_t draft_ns = 0;  // the MTP draft passes, collectives included
};

// Which kernels a bundle covers for a model, per block type and batch regime: the rows
// `fleetsim bundle coverage` prints, from the same lists StepCostModel enforces.
struct CoverageRow {
  std::string block;   // full_attention, linear_attention, mlp, moe, head
  std::string regime;  // prefill, decode, mixed, or "all" for regime-free kernels
  std::string kernel;
  bool required = false;
  bool covered = false;
  std::string fused_into;  // the fused kernel that carries it, when not its own row
  std::string table;       // the bundle file it is read from, e.g. "dense.csv"
};
std::vector<CoverageRow> Coverage(const ModelCard& card, const BundleTables& tables);

class StepCostModel {
 public:
  // `collectives` is the TP group's (one rank at TP 1).
  StepCostModel(const ModelCard& card, const Bundle& bundle, int tp, CollectiveModel collectives,
                int64_t step_overhead_ns);
  // It points into its own tables.
  StepCostModel(const StepCostModel&) = delete;
  StepCostModel& operator=(const StepCostModel&) = delete;

  StepCost Cost(const BatchShape& batch) const;
  // For a data-parallel rank with expert parallelism (engine/dp_engine.h): the step
  // without its MoE blocks (attention, dense kernels, head, TP collectives, overhead);
  // and the MoE blocks of all layers on one rank of the DP x TP expert-parallel group when
  // the dispatch gathered `gathered_tokens` tokens from the `dp` DP ranks, in microseconds.
  // `run_tokens` (at least the batch's tokens): what its dense kernels run on, the batch
  // padded to the DP ranks' common CUDA-graph size; attention and the head read the batch.
  StepCost CostOutsideMoe(const BatchShape& batch, int64_t run_tokens) const;
  double ExpertShardMoeUs(double gathered_tokens, int dp) const;
  int moe_layers() const { return moe_layers_; }
  int moe_experts() const { return moe_experts_; }
  int moe_top_k() const { return moe_top_k_; }
  // Charges `num_speculative_tokens` MTP draft passes in every step (0: none). A bundle
  // without the `mtp_fc` kernel cannot price them and is refused (an InputError).
  void EnableMtpDrafting(int num_speculative_tokens);
  int draft_passes() const { return draft_passes_; }
  // Lookups that left a table's measured range, over every table.
  int64_t OutOfGridLookups() const;

  // What a decode-only step of one batch size costs besides its attention read: every
  // term of Cost that depends on the batch size alone, read once (DecodeRun).
  struct DecodePrices {
    int64_t decodes = 0;
    double head_us = 0;                     // embedding + final layernorm
    std::vector<double> full_kernels_us;    // per full-attention layer, after attention
    std::vector<double> tail_us;            // the terms Cost adds after the full layers
    std::vector<const GridTable*> outside;  // one entry per reused read outside its grid
    GridTable::Position decodes_at;         // on the decode attention table's first axis
    GridTable::AlongSecond attention;       // the decode attention table read at decodes_at
    int64_t after_compute_ns = 0;           // the TP collectives and the step overhead
  };
  // Prices every decode-only batch size from 1 to `max_decodes` once, for all the
  // DecodeRuns of this model to share (BuildEngineSetup: up to the engine's max_num_seqs);
  // a run of a larger size prices its own. Not with MTP drafting (no decode runs).
  void PrepareDecodeRuns(int64_t max_decodes);

  // Decode-only steps (the engine's event-driven decode): what Cost gives for each, to the
  // bit, with the same out-of-grid counts, from the batch size's DecodePrices -- a step
  // reads the decode attention table, its context position searched from the last one
  // found, and keeps the skew bucket's alpha while the batch stays in the bucket's bins.
  // One object serves any number of steps of any size, in any order.
  class DecodeRun {
   public:
    explicit DecodeRun(const StepCostModel& model) : model_(&model) {}
    DecodeRun(const StepCostModel& model, int64_t decodes) : DecodeRun(model) {
      SetDecodes(decodes);
    }
    // The batch size of the steps that follow.
    void SetDecodes(int64_t decodes);
    int64_t decodes() const { return prices_ == nullptr ? 0 : prices_->decodes; }
    // The total time of a step whose decodes' contexts sum to `context_sum`, the shortest
    // and longest being `context_min` and `context_max` (the skew correction reads them).
    int64_t TotalNs(int64_t context_sum, int64_t context_min, int64_t context_max);

   private:
    // The skew correction's alpha for this step (0: none), as Cost finds it.
    double SkewAlpha(int64_t context_sum, int64_t context_min, int64_t context_max);

    const StepCostModel* model_;
    const DecodePrices* prices_ = nullptr;
    std::unique_ptr<DecodePrices> own_prices_;  // a size past the prepared ones
    GridTable::Position context_at_;            // on the attention table's context axis
    GridTable::Position longest_at_;            // there, the longest context's
    // The skew rate and longest context that fall in the bins of the last bucket read (its
    // alpha kept); empty after a change of size.
    SkewAxis::Span rate_span_;
    SkewAxis::Span longest_span_;
    double skew_alpha_ = 0;
    // The last step SkewAlpha saw, and whether a correction applied to it (its
    // coordinates existed).
    struct LastStep {
      int64_t sum = 0, min = 0, max = 0;
      bool valid = false;
      bool corrected = false;
    };
    LastStep last_;
  };

 private:
  // Attention with the decode-skew correction; and without, at decode context `kv`.
  double AttentionUs(const BatchShape& batch) const;
  // The correction alone: `t_mean`, the time at the mean context, moved toward the time at
  // the longest (what DecodeRun adds to its own read at the mean).
  double SkewedAttentionUs(const BatchShape& batch, double t_mean) const;
  // Its parts: the batch's skew bucket (nullopt: no correction), and `t_mean` moved by the
  // bucket's alpha toward `t_max`, the time at the longest context.
  std::optional<uint64_t> SkewBucket(const BatchShape& batch) const;
  // The bucket's coordinates for `decodes` decodes whose contexts sum to `context_sum`,
  // from `context_min` to `context_max`: where the floored mean lies between the
  // shortest and the longest, and the longest; nullopt when no correction applies (one
  // decode, or the longest at the floored mean or the shortest).
  struct SkewCoordinates {
    double rate = 0;
    double longest = 0;
  };
  static std::optional<SkewCoordinates> SkewCoordinatesOf(int64_t decodes, int64_t context_sum,
                                                          int64_t context_min, int64_t context_max);
  static double Skewed(double t_mean, double alpha, double t_max);
  double AttentionAt(const BatchShape& batch, double kv) const;
  // The prefill's key on the attention table's axis (legacy tables: kv_prefill).
  double PrefillKeyCoordinate(const BatchShape& batch) const;
  double GdnRegimeUs(const BatchShape& batch) const;
  double MoeUs(double tokens) const;
  StepCost Compose(const BatchShape& batch, int64_t run_tokens, bool with_moe) const;
  // Cost's TP collectives for a step of `tokens` tokens sampling `logits_rows` sequences,
  // the bundle's measured all-reduce table (where it has one) read by
  // `read_allreduce(table, bytes)`.
  template <typename ReadAllreduce>
  void AddCollectives(int64_t tokens, int64_t logits_rows, ReadAllreduce&& read_allreduce,
                      StepCost& cost) const;
  DecodePrices PriceDecodes(int64_t decodes) const;
  // The MTP draft passes of a step of `batch`, in nanoseconds.
  int64_t DraftNs(const BatchShape& batch) const;
  // One draft pass: `tokens` tokens through one decoder layer whose attention is
  // `attention`, and the lm_head for `sequences` rows.
  double DraftPassUs(const BatchShape& attention, double tokens, double sequences) const;
  // At TP > 1: the pass's all-reduces, the all-gather of fc's output and the logits
  // all-gather.
  double DraftCollectivesUs(int64_t tokens, int64_t sequences) const;
  // A per-token kernel at `tokens` (`at`: tokens located on the shared token axis), and
  // `start` plus such kernels added in order (the order fixes the rounding).
  double TokenUs(const GridTable& kernel, double tokens, const GridTable::Position& at) const {
    return shared_token_axis_ ? kernel.LookupAt(at) : kernel.Lookup({tokens});
  }
  double PlusTokenUs(double start, const std::vector<const GridTable*>& kernels, double tokens,
                     const GridTable::Position& at) const;

  const BundleTables& tables_;
  CollectiveModel collectives_;
  int64_t step_overhead_ns_;
  int64_t hidden_bytes_per_token_;
  int64_t logits_bytes_per_sequence_;
  int num_layers_;
  int tp_;
  // Layer counts by kind, and the dense kernels each kind charges.
  int full_layers_ = 0;
  int gdn_layers_ = 0;
  int dense_mlp_layers_ = 0;
  int moe_layers_ = 0;
  int moe_experts_ = 0;
  int moe_top_k_ = 0;
  // The tables each step reads, found once (pointers into tables_).
  std::vector<const GridTable*> full_kernels_;
  std::vector<const GridTable*> gdn_kernels_;
  std::vector<const GridTable*> mlp_kernels_;
  const GridTable* embedding_ = nullptr;
  const GridTable* final_layernorm_ = nullptr;
  const GridTable* lm_head_ = nullptr;
  const GridTable* sampler_ = nullptr;
  const GridTable* mtp_fc_ = nullptr;  // with MTP drafting only
  std::string bundle_dir_;             // for the refusal of a bundle without mtp_fc
  bool has_sampler_ = false;
  // Whether every per-token table above has embedding_'s token axis (so one Locate serves
  // them all); bundles whose kernels were measured at different counts look each one up.
  bool shared_token_axis_ = false;
  int draft_passes_ = 0;
  std::vector<DecodePrices> decode_prices_;  // batch sizes 1, 2, ... (PrepareDecodeRuns)
};

}  // namespace fleetsim
