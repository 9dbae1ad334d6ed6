// A distribution of token counts (prompt lengths, output lengths, turns per session),
// read from one YAML mapping of a generator spec:
//
//   {distribution: fixed, value: 128}
//   {distribution: uniform, min: 32, max: 512}                 # integers, both ends included
//   {distribution: lognormal, median: 1000, sigma: 0.8, min: 1, max: 32768}
//   {distribution: zipf, exponent: 1.2, min: 1, max: 4096}     # P(min + r - 1) ~ r^-exponent
//
//   LengthDistribution input = LengthDistribution::Parse(spec.Child("input_tokens"));
//   int64_t tokens = input.Sample(rng);
//
// Every value is >= 1. Lognormal draws are rounded and clamped to [min, max] (default
// [1, 2^31 - 1]) rather than redrawn, so each sample costs the same number of draws.
#pragma once

#include <cstdint>
#include <vector>

#include "core/yaml_section.h"
#include "workload/generator_random.h"

namespace fleetsim::workload_gen {

class LengthDistribution {
 public:
  // Zipf keeps a cumulative table of max - min + 1 entries; wider ranges are refused.
  static constexpr int64_t kMaxZipfRange = int64_t{1} << 20;

  // InputErrors name the file, the line and the key.
  static LengthDistribution Parse(const YamlSection& section);

  int64_t Sample(Rng& rng) const;
  int64_t min() const { return min_; }
  int64_t max() const { return max_; }

 private:
  enum class Kind { kFixed, kUniform, kLognormal, kZipf };

  Kind kind_ = Kind::kFixed;
  int64_t min_ = 1;
  int64_t max_ = 1;
  double median_ = 1;
  double sigma_ = 0;
  std::vector<double> zipf_cdf_;  // zipf_cdf_[i]: sum of weights of ranks 1..i+1
};

}  // namespace fleetsim::workload_gen
