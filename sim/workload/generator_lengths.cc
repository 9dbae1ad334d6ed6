#include "workload/generator_lengths.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <system_error>

#include "core/format.h"
#include "core/input_error.h"
#include "workload/generator.h"
#include "workload/generator_fields.h"
#include "workload/generator_random.h"

namespace fleetsim::workload_gen {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kDefaultMax = LengthDistribution::kMaxLength;

// A length bound as written, refused above kMaxLength.
int64_t GetLength(const YamlSection& s, std::string_view key, std::optional<int64_t> fallback) {
  const int64_t value = GetCount(s, key, fallback);
  if (value > LengthDistribution::kMaxLength) {
    s.Fail(key, "must be at most " + WithCommas(LengthDistribution::kMaxLength) + " tokens, got " +
                    std::to_string(value));
  }
  return value;
}

// The purpose of the stream that picks a trace's sample. It is not per entity, so it is
// not a StreamPurpose (those are small integers); the ASCII of "trace-rs" is far from them.
constexpr uint64_t kTraceSamplePurpose = 0x74726163652D7273ULL;

void CheckRange(const YamlSection& s, int64_t min, int64_t max) {
  if (max < min) {
    s.Fail("max", "must be >= min (" + std::to_string(min) + "), got " + std::to_string(max));
  }
}

// Relative to the spec file, as every path in a config is.
std::string ResolvePath(const YamlSection& s, const std::string& given) {
  const fs::path p(given);
  if (p.is_absolute()) return given;
  return (fs::path(s.file()).parent_path() / p).lexically_normal().string();
}

}  // namespace

void LengthDistribution::ParseTrace(const YamlSection& s, LengthOf of, uint64_t seed) {
  s.RejectUnknownKeys({"distribution", "path", "format", "field", "sample_rows", "min", "max"});
  if (of == LengthOf::kTurns) {
    s.Fail("distribution", "trace gives token counts (input_tokens, output_tokens), not turns");
  }
  kind_ = Kind::kTrace;
  const std::string path = ResolvePath(s, s.Get<std::string>("path"));
  const std::string format = s.GetOr<std::string>("format", "auto");
  const std::string field =
      s.GetOr<std::string>("field", of == LengthOf::kInputTokens ? "input" : "output");
  if (field != "input" && field != "output") {
    s.Fail("field", "unknown field '" + field + "' (accepted: input, output)");
  }
  const std::vector<std::string> formats = {"auto",  "native", "vllm-bench",
                                            "azure", "vidur",  "mooncake"};
  if (std::find(formats.begin(), formats.end(), format) == formats.end()) {
    s.Fail("format", "unknown trace format '" + format +
                         "' (accepted: auto, native, vllm-bench, azure, vidur, mooncake)");
  }
  const int64_t rows = GetCount(s, "sample_rows", kDefaultTraceSampleRows);
  if (rows > kMaxTraceSampleRows) {
    s.Fail("sample_rows", "must be at most " + std::to_string(kMaxTraceSampleRows));
  }
  min_ = GetCount(s, "min", 1);
  max_ = GetLength(s, "max", kDefaultMax);
  CheckRange(s, min_, max_);

  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) s.Fail("path", "no trace file at '" + path + "'");
  if (format == "auto" && IsGeneratorSpec(path)) {
    s.Fail("path", "'" + path + "' is a generator spec, not a trace");
  }
  const TraceField which = field == "input" ? TraceField::kInput : TraceField::kOutput;
  const uint64_t stream =
      StreamSeed(seed, static_cast<StreamPurpose>(kTraceSamplePurpose), static_cast<uint64_t>(of));
  try {
    trace_ = std::make_shared<const TraceLengthSample>(
        TraceLengthSample::Load(path, format, which, rows, stream));
  } catch (const InputError& e) {
    s.Fail("path", std::string("cannot read the trace: ") + e.what());
  }
  if (trace_->values().empty()) s.Fail("path", "trace '" + path + "' has no requests");
}

LengthDistribution LengthDistribution::Parse(const YamlSection& s, LengthOf of, uint64_t seed) {
  LengthDistribution d;
  const std::string name = s.Get<std::string>("distribution");
  if (name == "fixed") {
    s.RejectUnknownKeys({"distribution", "value"});
    d.kind_ = Kind::kFixed;
    d.min_ = d.max_ = GetLength(s, "value", std::nullopt);
    return d;
  }
  if (name == "uniform") {
    s.RejectUnknownKeys({"distribution", "min", "max"});
    d.kind_ = Kind::kUniform;
    d.min_ = GetCount(s, "min");
    d.max_ = GetLength(s, "max", std::nullopt);
  } else if (name == "lognormal") {
    s.RejectUnknownKeys({"distribution", "median", "sigma", "min", "max"});
    d.kind_ = Kind::kLognormal;
    d.median_ = GetNumber(s, "median", kPositive);
    d.sigma_ = GetNumber(s, "sigma", kNonNegative);
    d.min_ = GetCount(s, "min", 1);
    d.max_ = GetLength(s, "max", kDefaultMax);
  } else if (name == "zipf") {
    s.RejectUnknownKeys({"distribution", "exponent", "min", "max"});
    d.kind_ = Kind::kZipf;
    const double exponent = GetNumber(s, "exponent", kPositive);
    d.min_ = GetCount(s, "min");
    d.max_ = GetLength(s, "max", std::nullopt);
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
  } else if (name == "trace") {
    d.ParseTrace(s, of, seed);
  } else {
    s.Fail("distribution", "unknown distribution '" + name +
                               "' (accepted: fixed, uniform, lognormal, zipf, trace)");
  }
  CheckRange(s, d.min_, d.max_);
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
    case Kind::kTrace:
      return std::clamp(trace_->Draw(rng), min_, max_);
  }
  return min_;
}

}  // namespace fleetsim::workload_gen
