// What one engine step computes, summarized for the cost tables: the prefill chunks and
// the decodes of the batch, reduced to the coordinates the bundle tables are keyed by.
//
// Several prefill chunks and many decodes of different context lengths map onto the
// attention table as ENGINE_SEMANTICS.md section 9 says: prefill_chunk = sum(c_i);
// prefill_key = sum(c_i * (k_i + c_i / 2)) / sum(c_i), the token-weighted mean position a
// prefill query attends to (history k_i plus half its own causal chunk); n_decode = the
// decodes; kv_decode = their mean context length (attention decode cost is close to linear
// in the total context, so the mean keeps the total right). The shortest and longest
// decode contexts are kept too: a batch of mixed contexts costs more than a uniform one
// at the mean (one long sequence outlasts the rest of the kernel's work; the skew
// correction of perf/skew_fit.h). GDN prefill cost is charged in 64-token scan chunks per
// sequence: sum(ceil(c_i / 64)).
//
// A speculative decode (1 + k query tokens over its context, engine/speculative.h) is a
// prefill-style call for attention on every backend (it joins the prefill coordinates), a
// recurrent update of 1 + k tokens for GDN (the decode kernel, which vLLM's
// fused_recurrent_gated_delta_rule runs for decodes and spec decodes alike: counted as
// 1 + k decode updates, not as a scan chunk), and 1 + k rows of logits (the target scores
// every draft position and the bonus one).
#pragma once

#include <cstdint>

namespace fleetsim {

class BatchShape {
 public:
  // A prefill chunk of `tokens` over `history` tokens already in the cache.
  void AddPrefill(int64_t tokens, int64_t history, bool samples);
  // A decode of one token over `context` tokens already in the cache.
  void AddDecode(int64_t context);
  // `count` decodes whose contexts sum to `context_sum`, the shortest `context_min` and the
  // longest `context_max` (the same shape as adding each).
  void AddDecodes(int64_t count, int64_t context_sum, int64_t context_min, int64_t context_max);
  // A decode that verifies `query_tokens - 1` drafts over `context` cached tokens.
  void AddSpeculativeDecode(int64_t context, int64_t query_tokens);
  // `count` decodes of `context` each.
  void AddUniformDecodes(int64_t count, int64_t context) {
    AddDecodes(count, count * context, context, context);
  }

  int64_t total_tokens() const { return prefill_tokens_ + num_decodes_; }
  // Prefill-style attention queries: prefill chunks and speculative decodes.
  int64_t prefill_tokens() const { return prefill_tokens_; }
  int64_t num_prefills() const { return num_prefills_; }
  int64_t num_spec_decodes() const { return num_spec_decodes_; }
  int64_t spec_tokens() const { return spec_tokens_; }
  // GDN: prefill chunks (scanned) and single-token updates (decodes and spec decode tokens).
  int64_t gdn_prefills() const { return num_prefills_ - num_spec_decodes_; }
  int64_t gdn_decode_tokens() const { return num_decodes_ + spec_tokens_; }
  // Rows of logits the lm_head computes: one per sampling sequence, 1 + k per spec decode.
  int64_t logits_rows() const { return num_decodes_ + sampling_prefills_ + spec_tokens_; }
  // Every sequence of the step, and the tokens each holds in the cache after it, summed:
  // what an MTP draft pass reads (one query per sequence).
  int64_t num_sequences() const { return num_decodes_ + num_prefills_; }
  int64_t cached_after_sum() const { return cached_after_sum_; }
  int64_t cached_after_min() const { return num_sequences() == 0 ? 0 : cached_after_min_; }
  int64_t cached_after_max() const { return cached_after_max_; }
  int64_t num_decodes() const { return num_decodes_; }
  // Decodes plus the prefills whose last prompt chunk runs in this step.
  int64_t sampled_sequences() const { return num_decodes_ + sampling_prefills_; }
  double prefill_key() const;
  double mean_decode_context() const;
  int64_t decode_context_sum() const { return decode_context_sum_; }
  // The shortest and longest decode context (0 without decodes).
  int64_t min_decode_context() const { return num_decodes_ == 0 ? 0 : decode_context_min_; }
  int64_t max_decode_context() const { return decode_context_max_; }
  int64_t gdn_scan_chunks() const { return gdn_scan_chunks_; }

 private:
  int64_t prefill_tokens_ = 0;
  int64_t num_prefills_ = 0;
  int64_t sampling_prefills_ = 0;
  double prefill_key_weighted_ = 0;
  int64_t gdn_scan_chunks_ = 0;
  int64_t num_decodes_ = 0;
  int64_t decode_context_sum_ = 0;
  int64_t decode_context_min_ = INT64_MAX;
  int64_t decode_context_max_ = 0;
  void AddCachedAfter(int64_t sum, int64_t min, int64_t max);

  int64_t num_spec_decodes_ = 0;
  int64_t spec_tokens_ = 0;
  int64_t cached_after_sum_ = 0;
  int64_t cached_after_min_ = INT64_MAX;
  int64_t cached_after_max_ = 0;
};

}  // namespace fleetsim
