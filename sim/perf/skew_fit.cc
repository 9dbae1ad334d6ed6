#include "perf/skew_fit.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "core/csv_reader.h"
#include "perf/bundle_format.h"

namespace fleetsim {
namespace {

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

const std::string& SkewAxis::LabelOf(double value) const {
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if (value <= bins[i + 1]) return labels[i];
  }
  return labels.back();
}

std::string SkewFit::Key(int64_t prefill_chunk, const std::string& n, const std::string& sr,
                         const std::string& kvb, const std::string& kp) {
  return "pc=" + std::to_string(prefill_chunk) + "|" + n + "|" + sr + "|" + kvb + "|" + kp;
}

double SkewFit::Alpha(int64_t prefill_chunk, int64_t n_decode, double rate, double longest,
                      double prefill_history) const {
  const double sr = std::clamp(rate, 0.0, 1.0);
  // LLMServingSim labels int(n), int(kv_big) and int(kp).
  const std::string key =
      Key(prefill_chunk, n.LabelOf(static_cast<double>(n_decode)), skew_rate.LabelOf(sr),
          kv_big.LabelOf(std::trunc(longest)), kp.LabelOf(std::trunc(prefill_history)));
  const auto found = alpha_by_bucket.find(key);
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
    fit.alpha_by_bucket[SkewFit::Key(
        csv.Int(kPc), std::string(csv.Text(kNLabel)), std::string(csv.Text(kSkewRateLabel)),
        std::string(csv.Text(kKvBigLabel)), std::string(csv.Text(kKpLabel)))] = alpha;
  }
  return fit;
}

}  // namespace fleetsim
