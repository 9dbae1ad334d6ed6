#include "bundles/analytic_skew.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <vector>

#include "core/format.h"
#include "perf/bundle_format.h"

namespace fleetsim {
namespace {

// A bucket's representative value: its upper edge, or twice the last finite edge for the
// open last bucket.
std::vector<double> Representatives(const SkewAxis& axis) {
  std::vector<double> out;
  for (std::size_t i = 0; i < axis.labels.size(); ++i) {
    const bool open = i + 1 == axis.labels.size() && i > 0;
    out.push_back(open ? 2 * axis.bins[i] : axis.bins[i + 1]);
  }
  return out;
}

// LLMServingSim's skew sweep: prefill chunks 0 and 16 to 2048 by doubling (meta.yaml
// skew_profile.grid.pc), a quarter context for the short decodes (skew_rep 4.0).
constexpr int64_t kMaxChunk = 2048;
constexpr double kSkewRep = 4.0;

}  // namespace

const SkewFit& AnalyticSkewAxes() {
  static const SkewFit axes = [] {
    SkewFit fit;
    fit.n = {{0, 2, 4, 8, 16, 32, 64, 128, 256, 1'000'000},
             {"n<=2", "n<=4", "n<=8", "n<=16", "n<=32", "n<=64", "n<=128", "n<=256", "n>256"}};
    fit.skew_rate = {{-0.01, 0.05, 0.15, 0.4, 0.7, 1.01},
                     {"sr<=5%", "sr<=15%", "sr<=40%", "sr<=70%", "sr>70%"}};
    fit.kv_big = {{0, 1024, 4096, 16384, 1'000'000'000},
                  {"kvB<=1k", "kvB<=4k", "kvB<=16k", "kvB>16k"}};
    fit.kp = {{-1, 0, 512, 1024, 2048, 4096, 8192, 1'000'000'000},
              {"kp=0", "kp<=512", "kp<=1k", "kp<=2k", "kp<=4k", "kp<=8k", "kp>8k"}};
    return fit;
  }();
  return axes;
}

double WriteAnalyticSkewFit(const AnalyticKernels& kernels, int64_t max_context,
                            const std::filesystem::path& tp_dir) {
  const SkewFit& axes = AnalyticSkewAxes();
  std::ofstream out(tp_dir / FileName(BundleFile::kSkewFit));
  out << HeaderLine(BundleFile::kSkewFit);
  std::vector<int64_t> chunks{0};
  for (int64_t c = 16; c <= kMaxChunk; c *= 2)
    chunks.push_back(c);
  const std::vector<double> ns = Representatives(axes.n);
  const std::vector<double> kv_bigs = Representatives(axes.kv_big);
  const std::vector<double> kps = Representatives(axes.kp);
  double alpha_sum = 0;
  int rows = 0;
  for (const int64_t pc : chunks) {
    for (std::size_t in = 0; in < ns.size(); ++in) {
      const auto n = static_cast<int64_t>(ns[in]);
      for (std::size_t is = 0; is < axes.skew_rate.labels.size(); ++is) {
        const double sr =
            std::clamp((axes.skew_rate.bins[is] + axes.skew_rate.bins[is + 1]) / 2, 0.0, 1.0);
        const int64_t big =
            std::clamp<int64_t>(std::llround(sr * static_cast<double>(n)), 1, n - 1);
        for (std::size_t ik = 0; ik < kv_bigs.size(); ++ik) {
          if (axes.kv_big.bins[ik] >= static_cast<double>(max_context)) continue;
          const auto kv_big =
              static_cast<int64_t>(std::min(kv_bigs[ik], static_cast<double>(max_context)));
          const auto kv_small = static_cast<int64_t>(static_cast<double>(kv_big) / kSkewRep);
          const int64_t mean = (big * kv_big + (n - big) * kv_small) / n;
          for (std::size_t ip = 0; ip < kps.size(); ++ip) {
            if (pc == 0 && ip != 0) continue;  // a pure decode batch has no prefill history
            const auto kp = static_cast<int64_t>(kps[ip]);
            // Each decode attends to its history and its own new token (as the table rows).
            const auto price = [&](int64_t kv, int64_t longest) {
              return pc == 0 ? kernels.AttentionDecodeUs(n, kv + 1, longest + 1)
                             : kernels.AttentionMixedUs(pc, kp, n, kv + 1, longest + 1);
            };
            const double skewed = price(mean, kv_big);
            const double at_mean = price(mean, mean);
            const double at_longest = price(kv_big, kv_big);
            const double gap = at_longest - at_mean;
            const double alpha = gap > 1e-9 ? (skewed - at_mean) / gap : 0.0;
            out << pc << ',' << axes.n.labels[in] << ',' << axes.skew_rate.labels[is] << ','
                << axes.kv_big.labels[ik] << ',' << axes.kp.labels[ip] << ',' << Fixed(alpha, 4)
                << ",1\n";
            if (pc > 0) {  // pure decodes always find their bucket (pc=0)
              alpha_sum += alpha;
              ++rows;
            }
          }
        }
      }
    }
  }
  return rows == 0 ? 0.0 : alpha_sum / rows;
}

}  // namespace fleetsim
