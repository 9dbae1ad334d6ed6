#include "perf/skew_fit.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>

#include "core/csv_reader.h"
#include "perf/bundle_format.h"

namespace fleetsim {
namespace {

// A bucket packs each axis's bin index into 8 bits and the prefill chunk above them.
constexpr std::size_t kMaxBinsPerAxis = 255;

SkewAxis ReadAxis(const YamlSection& axes, const std::string& name) {
  SkewAxis axis;
  axis.bins = axes.GetList<double>(name + "_bins");
  axis.labels = axes.GetList<std::string>(name + "_labels");
  if (axis.labels.empty() || axis.bins.size() != axis.labels.size() + 1) {
    axes.Fail(name + "_labels", "needs one label per bin (one fewer than " + name + "_bins)");
  }
  for (std::size_t i = 1; i < axis.bins.size(); ++i) {
    if (!(axis.bins[i] > axis.bins[i - 1])) axes.Fail(name + "_bins", "must be ascending");
  }
  if (axis.labels.size() > kMaxBinsPerAxis)
    axes.Fail(name + "_labels", "has more than " + std::to_string(kMaxBinsPerAxis) + " bins");
  return axis;
}

void ReadAxes(const YamlSection& axes, SkewFit& fit) {
  axes.RejectUnknownKeys({"pc", "n_bins", "n_labels", "skew_rate_bins", "skew_rate_labels",
                          "kv_big_bins", "kv_big_labels", "kp_bins", "kp_labels"});
  fit.n = ReadAxis(axes, "n");
  fit.skew_rate = ReadAxis(axes, "skew_rate");
  fit.kv_big = ReadAxis(axes, "kv_big");
  fit.kp = ReadAxis(axes, "kp");
}

}  // namespace

std::size_t SkewAxis::IndexOf(double value) const {
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if (value <= bins[i + 1]) return i;
  }
  return labels.size() - 1;
}

SkewAxis::Span SkewAxis::SpanOf(double value) const {
  const std::size_t i = IndexOf(value);
  constexpr double kInfinity = std::numeric_limits<double>::infinity();
  return {i == 0 ? -kInfinity : bins[i], i + 1 == labels.size() ? kInfinity : bins[i + 1]};
}

std::optional<std::size_t> SkewAxis::IndexOfLabel(const std::string& label) const {
  const auto found = std::find(labels.begin(), labels.end(), label);
  if (found == labels.end()) return std::nullopt;
  return static_cast<std::size_t>(found - labels.begin());
}

uint64_t SkewFit::BucketOf(int64_t prefill_chunk, std::size_t n, std::size_t sr, std::size_t kvb,
                           std::size_t kp) {
  return (static_cast<uint64_t>(prefill_chunk) << 32) | (n << 24) | (sr << 16) | (kvb << 8) | kp;
}

bool SkewFit::SetAlpha(int64_t prefill_chunk, const std::string& n_label,
                       const std::string& sr_label, const std::string& kvb_label,
                       const std::string& kp_label, double alpha) {
  const auto n_bin = n.IndexOfLabel(n_label), sr_bin = skew_rate.IndexOfLabel(sr_label),
             kvb_bin = kv_big.IndexOfLabel(kvb_label), kp_bin = kp.IndexOfLabel(kp_label);
  if (!n_bin || !sr_bin || !kvb_bin || !kp_bin) return false;
  alpha_by_bucket[BucketOf(prefill_chunk, *n_bin, *sr_bin, *kvb_bin, *kp_bin)] = alpha;
  return true;
}

std::string SkewFit::Key(int64_t prefill_chunk, const std::string& n, const std::string& sr,
                         const std::string& kvb, const std::string& kp) {
  return "pc=" + std::to_string(prefill_chunk) + "|" + n + "|" + sr + "|" + kvb + "|" + kp;
}

double SkewFit::Alpha(int64_t prefill_chunk, int64_t n_decode, double rate, double longest,
                      double prefill_history) const {
  return AlphaIn(BucketFor(prefill_chunk, n_decode, rate, longest, prefill_history));
}

uint64_t SkewFit::BucketFor(int64_t prefill_chunk, int64_t n_decode, double rate, double longest,
                            double prefill_history) const {
  const double sr = std::clamp(rate, 0.0, 1.0);
  // LLMServingSim labels int(n), int(kv_big) and int(kp).
  return BucketOf(prefill_chunk, n.IndexOf(static_cast<double>(n_decode)), skew_rate.IndexOf(sr),
                  kv_big.IndexOf(std::trunc(longest)), kp.IndexOf(std::trunc(prefill_history)));
}

double SkewFit::AlphaIn(uint64_t bucket) const {
  const auto found = alpha_by_bucket.find(bucket);
  return found == alpha_by_bucket.end() ? alpha_default : found->second;
}

SkewFit DefaultSkewAxes() {
  SkewFit fit;
  fit.n = {{0, 2, 4, 8, 16, 32, 64, 128, 1'000'000},
           {"n<=2", "n<=4", "n<=8", "n<=16", "n<=32", "n<=64", "n<=128", "n>128"}};
  fit.kv_big = {{0, 1024, 4096, 16384, 1'000'000'000},
                {"kvB<=1k", "kvB<=4k", "kvB<=16k", "kvB>16k"}};
  fit.skew_rate = {{-0.01, 0.05, 0.15, 0.40, 0.70, 1.01},
                   {"sr<=5%", "sr<=15%", "sr<=40%", "sr<=70%", "sr>70%"}};
  fit.kp = {{-1, 0, 2048, 1'000'000'000}, {"kp=0", "kp<=2k", "kp>2k"}};
  return fit;
}

std::optional<SkewFit> ReadSkewFit(const YamlSection& meta, int tp, const std::string& csv_path) {
  const std::optional<YamlSection> block = meta.FindChild(meta_key::kSkewFit);
  if (!block || !block->GetOr<bool>("enabled", false)) return std::nullopt;
  SkewFit fit = DefaultSkewAxes();
  fit.alpha_default = block->GetOr<double>("alpha_default", 0.0);
  std::optional<YamlSection> entry;
  if (const auto per_tp = block->FindChild(meta_key::kPerTp))
    entry = per_tp->FindChild(std::to_string(tp));
  if (entry && entry->Has("bucket_axes")) {
    ReadAxes(entry->Child("bucket_axes"), fit);
  } else if (block->Has("bucket_axes")) {
    ReadAxes(block->Child("bucket_axes"), fit);
  }
  if (!entry) return fit;  // the block's pooled alpha for every batch
  fit.alpha_default = entry->GetOr<double>("alpha_default", 0.0);
  if (!std::filesystem::exists(csv_path)) return fit;
  CsvReader csv(csv_path);
  using namespace column;
  csv.RequireColumns({kPc, kNLabel, kSkewRateLabel, kKvBigLabel, kKpLabel, kAlpha});
  while (csv.Next()) {
    const double alpha = csv.Number(kAlpha);
    if (!std::isfinite(alpha)) csv.Fail(kAlpha, "must be a finite number");
    const int64_t pc = csv.Int(kPc);
    if (pc < 0 || pc > INT32_MAX) csv.Fail(kPc, "must be a prefill chunk in [0, 2^31)");
    fit.SetAlpha(pc, std::string(csv.Text(kNLabel)), std::string(csv.Text(kSkewRateLabel)),
                 std::string(csv.Text(kKvBigLabel)), std::string(csv.Text(kKpLabel)), alpha);
  }
  return fit;
}

}  // namespace fleetsim
