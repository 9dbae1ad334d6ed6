// A distribution of token counts (prompt lengths, output lengths, turns per session),
// read from one YAML mapping of a generator spec:
//
//   {distribution: fixed, value: 128}
//   {distribution: uniform, min: 32, max: 512}                 # integers, both ends included
//   {distribution: lognormal, median: 1000, sigma: 0.8, min: 1, max: 32768}
//   {distribution: zipf, exponent: 1.2, min: 1, max: 4096}     # P(min + r - 1) ~ r^-exponent
//   {distribution: trace, path: ../traces/conv.csv, format: auto, field: input,
//    sample_rows: 100000, min: 1, max: 8192}                   # resampled from a real trace
//
//   LengthDistribution input = LengthDistribution::Parse(spec.Child("input_tokens"),
//                                                        LengthOf::kInputTokens, seed);
//   int64_t tokens = input.Sample(rng);
//
// Every value is >= 1 and at most kMaxLength (10,000,000: a prompt's block hashes and a
// request's tokens stay within memory; a larger `value` or `max` is refused). Lognormal
// and trace draws are clamped to [min, max] (default [1, kMaxLength]) rather than
// redrawn, so each sample costs the same number of draws.
//
// `trace` draws a length uniformly from the requests of a trace (workload/length_sample.h):
// `path` is relative to the spec file; `format` is as for `fleetsim run --format` (default
// auto: detected by content); `field` is input or output (default: input for input_tokens,
// output for output_tokens; refused for session turns). The trace is streamed once, when the
// spec is read, into a uniform sample of at most `sample_rows` values (default 100,000),
// chosen by a stream of the spec's seed; with sample_rows >= the trace's requests every
// request is kept, and draws follow the trace's own frequencies.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/random.h"
#include "core/yaml_section.h"
#include "workload/length_sample.h"

namespace fleetsim::workload_gen {

// What a distribution gives the length of; a trace distribution reads this field by default.
enum class LengthOf : uint64_t { kInputTokens = 0, kOutputTokens = 1, kTurns = 2 };

class LengthDistribution {
 public:
  // Zipf keeps a cumulative table of max - min + 1 entries; wider ranges are refused.
  static constexpr int64_t kMaxZipfRange = int64_t{1} << 20;
  // The largest length: also the most tokens of a session's system prompt and of a
  // shared prefix.
  static constexpr int64_t kMaxLength = 10'000'000;
  static constexpr int64_t kDefaultTraceSampleRows = 100'000;
  // 80 MB of lengths at most; a sample this large is as good as the trace.
  static constexpr int64_t kMaxTraceSampleRows = 10'000'000;

  // `of` and `seed` (the spec's) matter only to `trace`. InputErrors name the file, the
  // line and the key; a trace's own errors are reported at `path`, with the trace's line.
  static LengthDistribution Parse(const YamlSection& section, LengthOf of, uint64_t seed);

  int64_t Sample(Rng& rng) const;
  int64_t min() const { return min_; }
  int64_t max() const { return max_; }
  // The trace's sample (`trace` only, else null).
  const TraceLengthSample* trace_sample() const { return trace_.get(); }

 private:
  enum class Kind { kFixed, kUniform, kLognormal, kZipf, kTrace };

  void ParseTrace(const YamlSection& s, LengthOf of, uint64_t seed);

  Kind kind_ = Kind::kFixed;
  int64_t min_ = 1;
  int64_t max_ = 1;
  double median_ = 1;
  double sigma_ = 0;
  std::vector<double> zipf_cdf_;                    // zipf_cdf_[i]: sum of weights of ranks 1..i+1
  std::shared_ptr<const TraceLengthSample> trace_;  // shared: copies of a spec share it
};

}  // namespace fleetsim::workload_gen
