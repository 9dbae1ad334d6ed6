#include "core/quantile_sketch.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <string>

namespace fleetsim {
namespace {

// A design limit, not a physical one: the dense form of one sketch (ToCounts) stays at
// most 8 MiB. The default (a = 0.005, min 1e-9) needs about 3,700 buckets.
constexpr double kMaxBuckets = 1 << 20;

double CheckedGamma(double relative_accuracy) {
  if (!(relative_accuracy > 0.0 && relative_accuracy < 1.0)) {
    throw std::invalid_argument("QuantileSketch: relative accuracy must be in (0, 1), got " +
                                std::to_string(relative_accuracy));
  }
  return (1.0 + relative_accuracy) / (1.0 - relative_accuracy);
}

double CheckedMinValue(double min_value) {
  if (!(min_value > 0.0 && min_value < QuantileSketch::kMaxValue)) {
    throw std::invalid_argument("QuantileSketch: minimum value must be in (0, kMaxValue), got " +
                                std::to_string(min_value));
  }
  return min_value;
}

// The bucket index of a positive finite value, still as a double (it may not fit an int).
double RawBucket(double value, double log_gamma) {
  return std::ceil(std::log(value) / log_gamma);
}

int BucketBound(double value, double log_gamma) {
  const double bucket = RawBucket(value, log_gamma);
  // |bucket| <= the bucket span whenever the span check in the constructor passes; this
  // check only keeps the conversion below defined until that check has run.
  if (!(std::fabs(bucket) <= 2 * kMaxBuckets)) {
    throw std::invalid_argument("QuantileSketch: relative accuracy too fine for this minimum");
  }
  return static_cast<int>(bucket);
}

}  // namespace

QuantileSketch::QuantileSketch(double relative_accuracy, double min_value)
    : gamma_(CheckedGamma(relative_accuracy)),
      log_gamma_(std::log(gamma_)),
      min_value_(CheckedMinValue(min_value)),
      min_bucket_(BucketBound(min_value_, log_gamma_)),
      max_bucket_(BucketBound(kMaxValue, log_gamma_)) {
  if (static_cast<double>(max_bucket_) - static_cast<double>(min_bucket_) + 1 > kMaxBuckets) {
    throw std::invalid_argument("QuantileSketch: relative accuracy " +
                                std::to_string(relative_accuracy) + " with minimum " +
                                std::to_string(min_value) + " needs too many buckets");
  }
}

int QuantileSketch::BucketOf(double value) const {
  // Called for value >= min_value_ only. Clamping (rather than trusting that std::log is
  // monotone) keeps every bucket inside [min_bucket_, max_bucket_]; +inf lands in the last.
  if (value >= kMaxValue) return max_bucket_;
  const double bucket = RawBucket(value, log_gamma_);
  return static_cast<int>(
      std::clamp(bucket, static_cast<double>(min_bucket_), static_cast<double>(max_bucket_)));
}

double QuantileSketch::ValueOf(int bucket) const {
  // The point of (gamma^(i-1), gamma^i] with equal relative distance a to both ends.
  return 2.0 * std::exp(static_cast<double>(bucket) * log_gamma_) / (gamma_ + 1.0);
}

void QuantileSketch::Grow(int bucket) {
  if (counts_.empty()) {
    offset_ = bucket;
    counts_.assign(1, 0);
  } else if (bucket < offset_) {
    counts_.insert(counts_.begin(), static_cast<std::size_t>(offset_ - bucket), 0);
    offset_ = bucket;
  } else if (bucket - offset_ >= static_cast<int>(counts_.size())) {
    counts_.resize(static_cast<std::size_t>(bucket - offset_) + 1, 0);
  }
}

void QuantileSketch::Add(double value) {
  if (!(value >= 0.0)) {
    throw std::invalid_argument("QuantileSketch::Add: value must be >= 0, got " +
                                std::to_string(value));
  }
  ++count_;
  if (value < min_value_) {
    ++zero_count_;
    return;
  }
  const int bucket = BucketOf(value);
  Grow(bucket);
  ++counts_[static_cast<std::size_t>(bucket - offset_)];
}

void QuantileSketch::Merge(const QuantileSketch& other) {
  if (gamma_ != other.gamma_ || min_value_ != other.min_value_) {
    throw std::invalid_argument("QuantileSketch::Merge: sketches have different parameters");
  }
  if (&other == this) {
    const QuantileSketch copy = other;
    Merge(copy);
    return;
  }
  zero_count_ += other.zero_count_;
  count_ += other.count_;
  if (other.counts_.empty()) return;
  Grow(other.offset_);
  Grow(other.offset_ + static_cast<int>(other.counts_.size()) - 1);
  const auto shift = static_cast<std::size_t>(other.offset_ - offset_);
  for (std::size_t i = 0; i < other.counts_.size(); ++i)
    counts_[shift + i] += other.counts_[i];
}

double QuantileSketch::Quantile(double q) const {
  if (!(q >= 0.0 && q <= 1.0)) {
    throw std::invalid_argument("QuantileSketch::Quantile: q must be in [0, 1], got " +
                                std::to_string(q));
  }
  if (count_ == 0) return std::numeric_limits<double>::quiet_NaN();
  const auto rank = static_cast<int64_t>(std::floor(q * static_cast<double>(count_ - 1)));
  int64_t seen = zero_count_;
  if (rank < seen) return 0.0;
  for (std::size_t i = 0; i < counts_.size(); ++i) {
    seen += counts_[i];
    if (rank < seen) return ValueOf(offset_ + static_cast<int>(i));
  }
  // Unreachable while count_ is the sum of all buckets; answer the largest bucket.
  return ValueOf(offset_ + static_cast<int>(counts_.size()) - 1);
}

std::vector<int64_t> QuantileSketch::ToCounts() const {
  std::vector<int64_t> dense(static_cast<std::size_t>(max_bucket_ - min_bucket_) + 2, 0);
  dense[0] = zero_count_;
  const auto shift = static_cast<std::size_t>(offset_ - min_bucket_) + 1;
  for (std::size_t i = 0; i < counts_.size(); ++i)
    dense[shift + i] = counts_[i];
  return dense;
}

void QuantileSketch::AddCounts(std::span<const int64_t> counts) {
  const auto length = static_cast<std::size_t>(max_bucket_ - min_bucket_) + 2;
  if (counts.size() != length) {
    throw std::invalid_argument("QuantileSketch::AddCounts: expected " + std::to_string(length) +
                                " counts, got " + std::to_string(counts.size()));
  }
  // Check everything before changing anything, so a bad vector leaves the sketch intact.
  std::size_t first = length;  // first and last non-zero bucket entry (index >= 1)
  std::size_t last = 0;
  for (std::size_t i = 0; i < length; ++i) {
    if (counts[i] < 0) {
      throw std::invalid_argument("QuantileSketch::AddCounts: negative count at index " +
                                  std::to_string(i));
    }
    if (i > 0 && counts[i] > 0) {
      first = std::min(first, i);
      last = i;
    }
  }
  zero_count_ += counts[0];
  count_ += counts[0];
  if (first == length) return;
  Grow(min_bucket_ + static_cast<int>(first) - 1);
  Grow(min_bucket_ + static_cast<int>(last) - 1);
  for (std::size_t i = first; i <= last; ++i) {
    counts_[static_cast<std::size_t>(min_bucket_ + static_cast<int>(i) - 1 - offset_)] += counts[i];
    count_ += counts[i];
  }
}

}  // namespace fleetsim
