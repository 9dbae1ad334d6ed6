// The decode-skew table of an analytic bundle: tp<N>/skew_fit.csv in LLMServingSim's
// format (perf/skew_fit.h), its alphas computed from the analytic attention kernel
// instead of profiled. For each bucket, one representative batch of LLMServingSim's skew
// sweep (its tier 1: a few decodes at the longest context, the rest at a quarter of it,
// meta.yaml skew_profile.grid.skew_rep 4.0) is priced three ways -- as it is, uniform at its
// mean, uniform at its longest -- and alpha = (skewed - mean) / (longest - mean). The
// kernel prices a skewed batch by its work items: the longest sequence's split outlasts
// the rest when the items do not fill the GPU (perf/analytic_kernels.h).
#pragma once

#include <filesystem>

#include "perf/analytic_kernels.h"
#include "perf/skew_fit.h"

namespace fleetsim {

// The bucket axes analytic bundles use: those of LLMServingSim's published RTX PRO 6000
// bundles (meta.yaml skew_fit.bucket_axes).
const SkewFit& AnalyticSkewAxes();

// Writes `tp_dir`/skew_fit.csv for decodes over contexts up to `max_context`; returns the
// TP's alpha_default: the mean alpha of its mixed-batch buckets. A pure-decode batch always
// finds its bucket (prefill chunk 0); a mixed batch only when its chunk is one of the
// sweep's sizes, so the default stands for mixed batches of any other chunk.
double WriteAnalyticSkewFit(const AnalyticKernels& kernels, int64_t max_context,
                            const std::filesystem::path& tp_dir);

}  // namespace fleetsim
