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
