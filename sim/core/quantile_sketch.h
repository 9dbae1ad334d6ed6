// A mergeable quantile sketch with a relative-error guarantee (the DDSketch idea: Masson,
// Rim, Lee, VLDB 2019). Positive values fall in logarithmic buckets of ratio
// gamma = (1 + a) / (1 - a); a quantile answers with its bucket's centre, which is within
// a relative `a` of the true value. Counts are integers, so merging sketches in any order
// or grouping gives the same sketch: percentiles do not depend on the MPI rank count.
//
//   QuantileSketch ttft(0.005);               // <= 0.5 % relative error
//   ttft.Add(0.231);
//   other.Merge(ttft);
//   double p99 = ttft.Quantile(0.99);          // NaN when empty
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace fleetsim {

class QuantileSketch {
 public:
  // Values below `min_value` (and zero) count in one zero bucket, answered as 0.
  // std::invalid_argument unless 0 < relative_accuracy < 1 and 0 < min_value < kMaxValue
  // (and the buckets between min_value and kMaxValue number at most about a million).
  explicit QuantileSketch(double relative_accuracy = 0.005, double min_value = 1e-9);

  // Negative and NaN values are an error (std::invalid_argument); values above kMaxValue,
  // +inf included, count in the last bucket.
  void Add(double value);
  // Adds another sketch's counts; both must have the same accuracy and minimum (else
  // std::invalid_argument).
  void Merge(const QuantileSketch& other);

  int64_t count() const { return count_; }
  // The value at quantile q in [0, 1]: the bucket holding the sample of rank
  // floor(q * (count - 1)) in sorted order; NaN when empty. q outside [0, 1] (or NaN) is
  // std::invalid_argument.
  double Quantile(double q) const;

  // A dense, fixed-length form for MPI reductions (MPI_SUM over int64): every sketch
  // with the same accuracy and minimum has the same length, covering values up to
  // `kMaxValue`; larger values count in the last bucket. Layout: [zero bucket, buckets
  // min_bucket_ .. max_bucket_]. AddCounts throws std::invalid_argument on a wrong length
  // or a negative entry, and then leaves the sketch unchanged.
  static constexpr double kMaxValue = 1e7;
  std::vector<int64_t> ToCounts() const;
  void AddCounts(std::span<const int64_t> counts);  // the inverse, merged in

 private:
  int BucketOf(double value) const;
  double ValueOf(int bucket) const;
  void Grow(int bucket);

  double gamma_;
  double log_gamma_;
  double min_value_;
  int min_bucket_;  // bucket of min_value_
  int max_bucket_;  // bucket of kMaxValue
  int64_t zero_count_ = 0;
  int64_t count_ = 0;
  // counts_[i] is bucket offset_ + i; grown on demand within [min_bucket_, max_bucket_].
  int offset_ = 0;
  std::vector<int64_t> counts_;
};

}  // namespace fleetsim
