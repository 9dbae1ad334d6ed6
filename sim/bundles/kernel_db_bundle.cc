#include "bundles/kernel_db_bundle.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <tuple>

#include "bundles/analytic_bundle.h"
#include "core/input_error.h"
#include "model/cache_shapes.h"
#include "perf/analytic_kernels.h"
#include "perf/grid_table.h"
#include "perf/kernel_db/measured_kernels.h"
#include "perf/layer_kernels.h"

namespace fleetsim {
namespace {

// A 1-D measured curve built from rows, read by linear interpolation.
class Curve {
 public:
  void Add(double x, double us) { points_[x] = us; }
  std::optional<double> At(double x) const {
    if (points_.size() < 2) return std::nullopt;
    if (!table_) {
      std::vector<double> xs;
      for (const auto& [px, us] : points_)
        xs.push_back(px);
      table_ = std::make_shared<GridTable>(std::vector<std::vector<double>>{xs});
      std::size_t i = 0;
      for (const auto& [px, us] : points_)
        table_->Set({i++}, us);
    }
    return std::max(0.0, table_->Lookup({x}));
  }

 private:
  std::map<double, double> points_;
  mutable std::shared_ptr<GridTable> table_;
};

// A 2-D measured surface on the grid its rows span, read by multilinear interpolation
// where every grid point a cell weighs was measured, and not at all elsewhere (no
// extrapolation: the analytic model prices what the table did not reach). A point measured
// more than once (the H200 generation table repeats every row) takes the mean.
class Surface {
 public:
  void Add(double x, double y, double us) {
    Sum& sum = sums_[{x, y}];
    sum.us += us;
    ++sum.rows;
  }
  // Puts the means on the grid, each capped by the smallest at a larger y with the same x:
  // decoding over fewer keys cannot take longer, so a row above that is a glitch of the
  // measurement (the tables have a few: the A100's batch-1 decode after 7 cached tokens
  // takes 44.6 us, against 12.2 us after 3 and after 15). Call once, after the last Add.
  void Finish() {
    if (sums_.empty()) return;
    std::set<double> xs, ys;
    for (const auto& [point, sum] : sums_) {
      xs.insert(point.first);
      ys.insert(point.second);
    }
    table_ = GridTable({{xs.begin(), xs.end()}, {ys.begin(), ys.end()}});
    for (std::size_t i = 0; i < xs.size(); ++i) {
      double smallest = std::numeric_limits<double>::infinity();
      for (std::size_t j = ys.size(); j-- > 0;) {
        auto it = sums_.find({table_.axis(0)[i], table_.axis(1)[j]});
        if (it == sums_.end()) continue;
        smallest = std::min(it->second.us / it->second.rows, smallest);
        table_.Set({i, j}, smallest);
      }
    }
  }
  std::optional<double> At(double x, double y) const {
    const double point[] = {x, y};
    return table_.empty() ? std::nullopt : table_.LookupSet(point);
  }

 private:
  struct Sum {
    double us = 0;
    int rows = 0;
  };
  std::map<std::pair<double, double>, Sum> sums_;
  GridTable table_;  // the capped means (Finish)
};

class KernelDbOverrides : public KernelOverrides {
 public:
  KernelDbOverrides(const ModelCard& card, const HardwareSpec& hardware, int tp,
                    const MeasuredTables& tables)
      : analytic_(card, hardware, tp) {
    int64_t k_heads = 0, v_heads = 0, dk = 0, dv = 0;
    if (card.linear) {
      k_heads = card.linear->num_k_heads / tp;
      v_heads = card.linear->num_v_heads / tp;
      dk = card.linear->k_head_dim;
      dv = card.linear->v_head_dim;
    }
    const int64_t q_heads = card.attention.num_q_heads / tp;
    const int64_t kv_heads = KvHeadsPerRank(card, tp);
    for (const MeasuredKernel& row : tables.rows) {
      if (row.cls == KernelClass::kDecodeAttention) {
        const AttentionKernelShape& a = row.attention;
        // Keyed by cached history, the bundle's kv_decode axis (the step attends to one
        // more key, the new token's).
        if (a.q_heads == q_heads && a.kv_heads == kv_heads && a.head_dim == card.attention.head_dim)
          decode_.Add(static_cast<double>(a.batch), static_cast<double>(a.history),
                      row.measured_us);
        continue;
      }
      if (row.cls == KernelClass::kGemm) {
        gemm_[{row.gemm.n, row.gemm.k}].Add(static_cast<double>(row.gemm.m), row.measured_us);
        continue;
      }
      if (!IsGdn(row.cls)) continue;
      const GdnKernelShape& g = row.gdn;
      if (g.k_heads != k_heads || g.v_heads != v_heads || g.head_k_dim != dk || g.head_v_dim != dv)
        continue;
      const Kernel kernel = BundleKernelOf(row.cls);
      const bool prefill = RunsIn(kernel, Regime::kPrefill);
      if (prefill && g.batch != 1) continue;  // one sequence: the bundle's prefill axis
      gdn_[kernel].Add(static_cast<double>(prefill ? g.seq_len : g.batch), row.measured_us);
    }
    decode_.Finish();
  }

  std::optional<double> DenseUs(Kernel kernel, int64_t tokens) const override {
    return Gemm(kernel, tokens);
  }
  std::optional<double> PerSequenceUs(Kernel kernel, int64_t sequences) const override {
    return Gemm(kernel, sequences);
  }
  // The prefill kernels' curves are over one sequence's tokens, the decode kernels' over
  // decode batches.
  std::optional<double> GdnUs(Kernel kernel, int64_t prefill_tokens,
                              int64_t n_decode) const override {
    auto curve = gdn_.find(kernel);
    if (curve == gdn_.end()) return std::nullopt;
    const bool prefill = RunsIn(kernel, Regime::kPrefill);
    if (prefill && prefill_tokens <= 0) return std::nullopt;
    if (!prefill && (prefill_tokens > 0 || n_decode <= 0)) return std::nullopt;
    return curve->second.At(static_cast<double>(prefill ? prefill_tokens : n_decode));
  }
  std::optional<double> AttentionDecodeUs(int64_t n_decode, int64_t kv) const override {
    return decode_.At(static_cast<double>(n_decode), static_cast<double>(kv));
  }

 private:
  std::optional<double> Gemm(Kernel kernel, int64_t m) const {
    const std::optional<GemmDims> dims = analytic_.GemmDimsOf(kernel);
    if (!dims) return std::nullopt;
    auto curve = gemm_.find({static_cast<int64_t>(dims->n), static_cast<int64_t>(dims->k)});
    if (curve == gemm_.end() || dims->n != std::floor(dims->n) || dims->k != std::floor(dims->k))
      return std::nullopt;
    return curve->second.At(static_cast<double>(m));
  }

  AnalyticKernels analytic_;
  std::map<std::pair<int64_t, int64_t>, Curve> gemm_;
  std::map<Kernel, Curve> gdn_;
  Surface decode_;  // decode-only attention by (sequences, cached history each), at this TP's heads
};

}  // namespace

// The A100's tables are held out of the analytic fit (`bundle compare-kernels` judges the
// model on them), but nothing stops a bundle from using what they measured.
std::optional<std::string> KernelDbSystemFor(const HardwareSpec& hardware) {
  if (hardware.name == "A100-SXM-80GB") return "a100_sxm";
  if (hardware.name == "H100-SXM") return "h100_sxm";
  if (hardware.name == "H200-SXM") return "h200_sxm";
  return std::nullopt;
}

std::string KernelDbSystemOf(const HardwareSpec& hardware) {
  if (std::optional<std::string> system = KernelDbSystemFor(hardware)) return *system;
  throw OptionError("--hardware",
                    "kernel-db tables exist for A100-SXM-80GB, H100-SXM and H200-SXM, not " +
                        hardware.name + " (use --source analytic)");
}

void WriteKernelDbBundle(const ModelCard& card, const HardwareSpec& hardware,
                         const std::vector<int>& tps, const std::string& aiconfigurator_dir,
                         const std::string& dir, const SettingError& error) {
  const std::string system = KernelDbSystemOf(hardware);
  auto tables = std::make_shared<MeasuredTables>(LoadMeasuredKernels(aiconfigurator_dir, system));
  BundleRecipe recipe;
  recipe.source = {{"kind", "kernel-db"},
                   {"tool", "fleetsim"},
                   {"tables", "aiconfigurator/" + system},
                   {"fill", "analytic roofline+occupancy"}};
  recipe.overrides = [&card, &hardware, tables](int tp) -> std::unique_ptr<KernelOverrides> {
    return std::make_unique<KernelDbOverrides>(card, hardware, tp, *tables);
  };
  WriteBundle(card, hardware, tps, dir, recipe, error);
}

}  // namespace fleetsim
