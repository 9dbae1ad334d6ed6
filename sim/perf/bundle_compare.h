// How far one bundle is from another, kernel by kernel: bundle A is read at every
// measured grid point of the reference bundle B (cells B filled in by interpolation are
// left out), per TP degree present in both.
//
//   BundleComparison c = CompareBundles(analytic, measured);
//   for (const KernelError& e : c.kernels) ... e.mape, e.bias, e.worst
#pragma once

#include <string>
#include <vector>

#include "perf/bundle.h"

namespace fleetsim {

struct CellError {
  std::string where;  // "(tokens=512)", "(chunk=256, kv=1024)", ...
  double candidate_us = 0;
  double reference_us = 0;
  double error = 0;  // signed fraction
};

struct KernelError {
  int tp = 1;
  std::string kind;    // dense, attention_prefill, attention_decode, attention_mixed,
                       // per_sequence, linear_attention, moe
  std::string kernel;  // the kernel name (the kind for attention and moe; "all" or "sum" in
                       // BundleComparison::kinds)
  int64_t cells = 0;
  double mape = 0;               // mean |A - B| / B
  double bias = 0;               // mean (A - B) / B
  std::vector<CellError> worst;  // largest |error| first, at most 3
};

struct BundleComparison {
  std::vector<KernelError> kernels;
  // The same, pooled over every kernel of a kind (and TP): kernel "all", each cell of each
  // kernel weighing the same. For the kinds of several kernels (dense, per_sequence) also
  // kernel "sum": the kind's kernels (those in both bundles) added up at each shape where
  // the reference measures all of them, so a kernel weighs by its time.
  std::vector<KernelError> kinds;
  std::vector<std::string> only_in_reference;  // kernels A lacks
};

BundleComparison CompareBundles(const Bundle& candidate, const Bundle& reference);

}  // namespace fleetsim
