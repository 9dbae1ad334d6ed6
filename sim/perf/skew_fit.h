// The skew correction of a decode batch whose contexts differ, in LLMServingSim's format
// and applied as LLMServingSim applies it (serving/core/trace_generator.py,
// _lookup_attention_with_skew and _skew_alpha; docs/BUNDLES.md, "Decode skew"):
//
//   t = t(mean context) + alpha x (t(max context) - t(mean context))
//
// for a batch with more than one decode whose contexts are not all equal; alpha comes
// from tp<N>/skew_fit.csv by bucket, "pc={prefill chunk}|{n}|{skew rate}|{max context}|
// {prefill history}", with the skew rate (mean - min) / (max - min) clipped to [0, 1],
// each value labelled by the bin edges in meta.yaml's skew_fit.bucket_axes (a value is
// in the first bin whose upper edge it does not pass). A batch whose bucket the table
// lacks gets the TP degree's alpha_default; a bundle without an enabled skew_fit block,
// none (alpha 0). The prefill chunk is matched exactly, as LLMServingSim does: only the
// profiled chunk sizes (0 for pure decode, powers of two) have their own alphas.
//
//   const SkewFit& fit = *bundle.ForTp(1).skew;
//   fit.Alpha(0, 32, 0.25, 4096, 0);   // the "pc=0|n<=32|sr<=40%|kvB<=4k|kp=0" bucket
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/yaml_section.h"

namespace fleetsim {

// One bucket axis: labels[i] covers (bins[i], bins[i + 1]].
struct SkewAxis {
  std::vector<double> bins;
  std::vector<std::string> labels;
  const std::string& LabelOf(double value) const { return labels[IndexOf(value)]; }
  std::size_t IndexOf(double value) const;
  // The bin a label names; nullopt for a label not on this axis.
  std::optional<std::size_t> IndexOfLabel(const std::string& label) const;
  // The values in one bin: (lower, upper]. The default span holds none.
  struct Span {
    double lower = 0;
    double upper = -1;
    bool Holds(double value) const { return lower < value && value <= upper; }
  };
  // The bin `value` falls in, as IndexOf finds it (the first and last bins reach past the
  // axis' ends).
  Span SpanOf(double value) const;
};

struct SkewFit {
  SkewAxis n;
  SkewAxis skew_rate;
  SkewAxis kv_big;
  SkewAxis kp;
  double alpha_default = 0;
  // By bucket: the prefill chunk and each axis's bin index, packed (BucketOf). The table is
  // read once and looked up at every decode step with mixed contexts, so the key is a
  // number, not LLMServingSim's label text (Key, as the file's rows spell it).
  std::unordered_map<uint64_t, double> alpha_by_bucket;

  double Alpha(int64_t prefill_chunk, int64_t n_decode, double rate, double longest,
               double prefill_history) const;
  // Alpha in two parts, for a caller that keeps the last bucket's alpha: the bucket a
  // batch falls in, and the alpha of a bucket.
  uint64_t BucketFor(int64_t prefill_chunk, int64_t n_decode, double rate, double longest,
                     double prefill_history) const;
  double AlphaIn(uint64_t bucket) const;
  // Sets a bucket's alpha from its labels; false (nothing set) when a label is on no axis:
  // a row no batch can reach, as in LLMServingSim, whose lookup is by the label text.
  bool SetAlpha(int64_t prefill_chunk, const std::string& n, const std::string& sr,
                const std::string& kvb, const std::string& kp, double alpha);
  static std::string Key(int64_t prefill_chunk, const std::string& n, const std::string& sr,
                         const std::string& kvb, const std::string& kp);

 private:
  static uint64_t BucketOf(int64_t prefill_chunk, std::size_t n, std::size_t sr, std::size_t kvb,
                           std::size_t kp);
};

// The skew fit of TP `tp` from meta.yaml's skew_fit block and, when it exists, the TP's
// table `csv_path`; nullopt when the block is absent or not enabled.
std::optional<SkewFit> ReadSkewFit(const YamlSection& meta, int tp, const std::string& csv_path);

// LLMServingSim's default axes (trace_generator.py _DEFAULT_SKEW_AXES), for a block
// without bucket_axes.
SkewFit DefaultSkewAxes();

}  // namespace fleetsim
