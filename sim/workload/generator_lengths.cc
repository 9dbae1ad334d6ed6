#include "workload/generator_lengths.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "workload/generator_fields.h"

namespace fleetsim::workload_gen {
namespace {

constexpr int64_t kDefaultMax = (int64_t{1} << 31) - 1;

}  // namespace

LengthDistribution LengthDistribution::Parse(const YamlSection& s) {
  LengthDistribution d;
  const std::string name = s.Get<std::string>("distribution");
  if (name == "fixed") {
    s.RejectUnknownKeys({"distribution", "value"});
    d.kind_ = Kind::kFixed;
    d.min_ = d.max_ = GetCount(s, "value");
    return d;
  }
  if (name == "uniform") {
    s.RejectUnknownKeys({"distribution", "min", "max"});
    d.kind_ = Kind::kUniform;
    d.min_ = GetCount(s, "min");
    d.max_ = GetCount(s, "max");
  } else if (name == "lognormal") {
    s.RejectUnknownKeys({"distribution", "median", "sigma", "min", "max"});
    d.kind_ = Kind::kLognormal;
    d.median_ = GetNumber(s, "median", kPositive);
    d.sigma_ = GetNumber(s, "sigma", kNonNegative);
    d.min_ = GetCount(s, "min", 1);
    d.max_ = GetCount(s, "max", kDefaultMax);
  } else if (name == "zipf") {
    s.RejectUnknownKeys({"distribution", "exponent", "min", "max"});
    d.kind_ = Kind::kZipf;
    const double exponent = GetNumber(s, "exponent", kPositive);
    d.min_ = GetCount(s, "min");
    d.max_ = GetCount(s, "max");
    if (d.max_ >= d.min_ && d.max_ - d.min_ >= kMaxZipfRange) {
      s.Fail("max", "zipf range max - min must be < " + std::to_string(kMaxZipfRange));
    }
    if (d.max_ >= d.min_) {
      const int64_t n = d.max_ - d.min_ + 1;
      d.zipf_cdf_.reserve(static_cast<size_t>(n));
      double total = 0;
      for (int64_t rank = 1; rank <= n; ++rank) {
        total += std::pow(static_cast<double>(rank), -exponent);
        d.zipf_cdf_.push_back(total);
      }
    }
  } else {
    s.Fail("distribution",
           "unknown distribution '" + name + "' (accepted: fixed, uniform, lognormal, zipf)");
  }
  if (d.max_ < d.min_) {
    s.Fail("max", "must be >= min (" + std::to_string(d.min_) + "), got " + std::to_string(d.max_));
  }
  return d;
}

int64_t LengthDistribution::Sample(Rng& rng) const {
  switch (kind_) {
    case Kind::kFixed:
      return min_;
    case Kind::kUniform: {
      const double span = static_cast<double>(max_ - min_ + 1);
      const auto offset = static_cast<int64_t>(std::floor(rng.Uniform() * span));
      return std::min(max_, min_ + offset);
    }
    case Kind::kLognormal: {
      double x = median_ * std::exp(sigma_ * rng.Normal());
      // Clamp in floating point first: llround of a value beyond int64 is undefined.
      x = std::clamp(x, static_cast<double>(min_), static_cast<double>(max_));
      return std::clamp(static_cast<int64_t>(std::llround(x)), min_, max_);
    }
    case Kind::kZipf: {
      const double target = rng.Uniform() * zipf_cdf_.back();
      const auto it = std::upper_bound(zipf_cdf_.begin(), zipf_cdf_.end(), target);
      const int64_t index = std::min<int64_t>(it - zipf_cdf_.begin(), max_ - min_);
      return min_ + index;
    }
  }
  return min_;
}

}  // namespace fleetsim::workload_gen
