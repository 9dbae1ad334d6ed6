#include "perf/batch_shape.h"

#include <algorithm>

#include "perf/bundle.h"

namespace fleetsim {

void BatchShape::AddPrefill(int64_t tokens, int64_t history, bool samples) {
  prefill_tokens_ += tokens;
  ++num_prefills_;
  if (samples) ++sampling_prefills_;
  prefill_key_weighted_ += static_cast<double>(tokens) *
                           (static_cast<double>(history) + static_cast<double>(tokens) / 2.0);
  gdn_scan_chunks_ += (tokens + kGdnScanChunk - 1) / kGdnScanChunk;
  AddCachedAfter(history + tokens, history + tokens, history + tokens);
}

void BatchShape::AddSpeculativeDecode(int64_t context, int64_t query_tokens) {
  prefill_tokens_ += query_tokens;
  ++num_prefills_;
  prefill_key_weighted_ += static_cast<double>(query_tokens) *
                           (static_cast<double>(context) + static_cast<double>(query_tokens) / 2.0);
  ++num_spec_decodes_;
  spec_tokens_ += query_tokens;
  const int64_t after = context + query_tokens;
  AddCachedAfter(after, after, after);
}

void BatchShape::AddCachedAfter(int64_t sum, int64_t min, int64_t max) {
  cached_after_sum_ += sum;
  cached_after_min_ = std::min(cached_after_min_, min);
  cached_after_max_ = std::max(cached_after_max_, max);
}

void BatchShape::AddDecode(int64_t context) {
  AddDecodes(1, context, context, context);
}

void BatchShape::AddDecodes(int64_t count, int64_t context_sum, int64_t context_min,
                            int64_t context_max) {
  if (count <= 0) return;
  num_decodes_ += count;
  decode_context_sum_ += context_sum;
  decode_context_min_ = std::min(decode_context_min_, context_min);
  decode_context_max_ = std::max(decode_context_max_, context_max);
  AddCachedAfter(context_sum + count, context_min + 1, context_max + 1);
}

double BatchShape::prefill_key() const {
  return prefill_tokens_ == 0 ? 0.0 : prefill_key_weighted_ / static_cast<double>(prefill_tokens_);
}

double BatchShape::mean_decode_context() const {
  return num_decodes_ == 0
             ? 0.0
             : static_cast<double>(decode_context_sum_) / static_cast<double>(num_decodes_);
}

}  // namespace fleetsim
