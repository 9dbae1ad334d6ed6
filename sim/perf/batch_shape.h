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
  // `count` decodes of `context` each.
  void AddUniformDecodes(int64_t count, int64_t context) {
    AddDecodes(count, count * context, context, context);
  }

  int64_t total_tokens() const { return prefill_tokens_ + num_decodes_; }
  int64_t prefill_tokens() const { return prefill_tokens_; }
  int64_t num_prefills() const { return num_prefills_; }
  int64_t num_decodes() const { return num_decodes_; }
  // Decodes plus the prefills whose last prompt chunk runs in this step.
  int64_t sampled_sequences() const { return num_decodes_ + sampling_prefills_; }
  double prefill_key() const;
  double mean_decode_context() const;
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
};

}  // namespace fleetsim
