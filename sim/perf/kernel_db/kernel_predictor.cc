#include "perf/kernel_db/kernel_predictor.h"

#include <algorithm>
#include <cmath>

namespace fleetsim {
namespace {

double D(int64_t v) {
  return static_cast<double>(v);
}

}  // namespace

KernelPredictor::KernelPredictor(const HardwareSpec& hardware, Dtype dtype,
                                 const AnalyticConstants& c)
    : roofline_(hardware, dtype, c) {}

KernelPredictor::KernelPredictor(const KernelRoofline& roofline) : roofline_(roofline) {}

double KernelPredictor::Us(const MeasuredKernel& k) const {
  const AttentionKernelShape& a = k.attention;
  const GdnKernelShape& g = k.gdn;
  switch (k.cls) {
    case KernelClass::kGemm:
      return roofline_.GemmUs(D(k.gemm.m), D(k.gemm.n), D(k.gemm.k));
    case KernelClass::kPrefillAttention:
      return roofline_.AttentionPrefillUs(D(a.batch), D(a.query_tokens), D(a.history), D(a.q_heads),
                                          D(a.kv_heads), D(a.head_dim));
    case KernelClass::kDecodeAttention:
      // The new token's K and V are written to the cache first, then attended: history + 1.
      return roofline_.AttentionDecodeUs(D(a.batch), D(a.history + 1), D(a.q_heads), D(a.kv_heads),
                                         D(a.head_dim));
    case KernelClass::kMoe: {
      // This GPU's shard: inter / tp wide, experts / ep of the experts, and (balanced
      // routing) tokens x top_k / ep of the token-expert pairs; the others' pairs are
      // masked (vLLM's expert_map), their rows still written and read.
      const MoeKernelShape& m = k.moe;
      const double pairs = D(m.tokens) * D(m.top_k) / D(m.ep);
      const double activated = std::min(D(m.experts) / D(m.ep), std::ceil(pairs));
      return roofline_.MoeUs(D(m.tokens), D(m.hidden), D(m.inter) / D(m.tp), pairs / D(m.tokens),
                             std::max(1.0, activated), 0, nullptr,
                             D(m.top_k) - pairs / D(m.tokens));
    }
    case KernelClass::kGdnConvPrefill:
      return roofline_.GdnConvPrefillUs(D(g.batch), D(g.batch * g.seq_len), D(g.ConvDim()),
                                        D(g.conv_kernel));
    case KernelClass::kGdnPrefill:
      return roofline_.GdnChunkPrefillUs(D(g.batch), D(g.batch * g.seq_len), D(g.k_heads),
                                         D(g.v_heads), D(g.head_k_dim), D(g.head_v_dim));
    case KernelClass::kGdnConvDecode:
      return roofline_.GdnConvDecodeUs(D(g.batch), D(g.ConvDim()), D(g.conv_kernel));
    case KernelClass::kGdnDecode:
      return roofline_.GdnRecurrentDecodeUs(D(g.batch), D(g.k_heads), D(g.v_heads), D(g.head_k_dim),
                                            D(g.head_v_dim));
  }
  return -1;
}

}  // namespace fleetsim
