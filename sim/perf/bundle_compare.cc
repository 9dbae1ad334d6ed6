#include "perf/bundle_compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>

#include "core/format.h"
#include "perf/bundle_format.h"
#include "perf/layer_kernels.h"

namespace fleetsim {
namespace {

std::string Where(const std::vector<std::string>& names, const std::vector<double>& point) {
  std::string text = "(";
  for (std::size_t i = 0; i < point.size(); ++i) {
    text += (i ? ", " : "") + names[i] + "=" + Significant(point[i]);
  }
  return text + ")";
}

// Accumulates cells into an error summary.
class Tally {
 public:
  void Add(CellError cell) {
    sum_abs_ += std::abs(cell.error);
    sum_ += cell.error;
    ++cells_;
    worst_.push_back(std::move(cell));
    std::sort(worst_.begin(), worst_.end(), [](const CellError& a, const CellError& b) {
      return std::abs(a.error) > std::abs(b.error);
    });
    if (worst_.size() > 3) worst_.pop_back();
  }
  KernelError Summary(int tp, std::string kind, std::string kernel) const {
    KernelError e;
    e.tp = tp;
    e.kind = std::move(kind);
    e.kernel = std::move(kernel);
    e.cells = cells_;
    e.mape = cells_ ? sum_abs_ / static_cast<double>(cells_) : 0;
    e.bias = cells_ ? sum_ / static_cast<double>(cells_) : 0;
    e.worst = worst_;
    return e;
  }
  bool empty() const { return cells_ == 0; }

 private:
  double sum_abs_ = 0, sum_ = 0;
  int64_t cells_ = 0;
  std::vector<CellError> worst_;
};

// A kind's kernels added up per shape: the kind's total time in A against B's.
class KindSum {
 public:
  void Add(const std::vector<double>& point, double a, double b) {
    Total& t = totals_[point];
    t.a += a;
    t.b += b;
    ++t.kernels;
  }
  void CountKernel() { ++kernels_; }
  // Only shapes where every compared kernel has a measured cell are whole totals.
  KernelError Summary(int tp, const std::string& kind,
                      const std::vector<std::string>& axis_names) const {
    Tally tally;
    for (const auto& [point, t] : totals_) {
      if (t.kernels == kernels_) tally.Add({Where(axis_names, point), t.a, t.b, (t.a - t.b) / t.b});
    }
    return tally.Summary(tp, kind, "sum");
  }
  bool worth_reporting() const { return kernels_ > 1; }

 private:
  struct Total {
    double a = 0, b = 0;
    int kernels = 0;
  };
  std::map<std::vector<double>, Total> totals_;
  int kernels_ = 0;
};

// Compares a reference table cell by cell against `predict` at the same coordinates.
void CompareTable(const GridTable& reference, const std::vector<std::string>& axis_names,
                  const std::function<double(const std::vector<double>&)>& predict, Tally& kernel,
                  Tally& kind, KindSum* sum = nullptr) {
  if (sum) sum->CountKernel();
  for (std::size_t flat = 0; flat < reference.size(); ++flat) {
    if (!reference.IsMeasured(flat)) continue;
    const double b = reference.ValueAt(flat);
    if (b <= 0) continue;
    const std::vector<double> point = reference.PointAt(flat);
    const double a = predict(point);
    CellError cell{Where(axis_names, point), a, b, (a - b) / b};
    if (sum) sum->Add(point, a, b);
    kernel.Add(cell);
    kind.Add(cell);
  }
}

}  // namespace

BundleComparison CompareBundles(const Bundle& candidate, const Bundle& reference) {
  BundleComparison out;
  for (const auto& [tp, ref] : reference.per_tp) {
    auto found = candidate.per_tp.find(tp);
    if (found == candidate.per_tp.end()) continue;
    const BundleTables& cand = found->second;
    std::map<std::string, Tally> kinds;
    KindSum dense_sum, per_sequence_sum;
    auto finish = [&](Tally& t, const std::string& kind, const std::string& kernel) {
      if (!t.empty()) out.kernels.push_back(t.Summary(tp, kind, kernel));
    };
    for (const auto& [name, table] : ref.dense) {
      auto a = cand.dense.find(name);
      if (a == cand.dense.end()) {
        out.only_in_reference.push_back("tp" + std::to_string(tp) + "/dense/" + name);
        continue;
      }
      Tally t;
      CompareTable(
          table, {"tokens"}, [&](const auto& p) { return a->second.Lookup(p); }, t, kinds["dense"],
          &dense_sum);
      finish(t, "dense", name);
    }
    for (const auto& [name, table] : ref.per_sequence) {
      auto a = cand.per_sequence.find(name);
      if (a == cand.per_sequence.end()) {
        out.only_in_reference.push_back("tp" + std::to_string(tp) + "/per_sequence/" + name);
        continue;
      }
      Tally t;
      CompareTable(
          table, {"sequences"}, [&](const auto& p) { return a->second.Lookup(p); }, t,
          kinds["per_sequence"], &per_sequence_sum);
      finish(t, "per_sequence", name);
    }
    // Attention, converting the prefill coordinate when the layouts differ.
    const AttentionTables& ra = ref.attention;
    const AttentionTables& ca = cand.attention;
    auto prefill_at = [&](double chunk, double ref_key) {
      double key = ref_key;
      if (ra.legacy_kv_prefill && !ca.legacy_kv_prefill) key = ref_key + chunk / 2;
      if (!ra.legacy_kv_prefill && ca.legacy_kv_prefill) key = std::max(0.0, ref_key - chunk / 2);
      return ca.prefill.Lookup({chunk, key});
    };
    const std::string key_name(ra.legacy_kv_prefill ? column::kKvPrefill : column::kPrefillKey);
    const std::string attention(NameOf(Kernel::kAttention));
    {
      Tally t;
      CompareTable(
          ra.prefill, {"chunk", key_name}, [&](const auto& p) { return prefill_at(p[0], p[1]); }, t,
          kinds["attention_prefill"]);
      finish(t, "attention_prefill", attention);
    }
    {
      Tally t;
      CompareTable(
          ra.decode, {"n_decode", "kv_decode"}, [&](const auto& p) { return ca.decode.Lookup(p); },
          t, kinds["attention_decode"]);
      finish(t, "attention_decode", attention);
    }
    if (!ra.mixed.empty()) {
      Tally t;
      CompareTable(
          ra.mixed, {"chunk", key_name, "n_decode", "kv_decode"},
          [&](const auto& p) {
            if (!ca.mixed.empty()) return ca.mixed.Lookup(p);  // same layout assumed
            return prefill_at(p[0], p[1]) + ca.decode.Lookup({p[2], p[3]});
          },
          t, kinds["attention_mixed"]);
      finish(t, "attention_mixed", attention);
    }
    for (const auto& [name, r] : ref.linear_attention) {
      auto a = cand.linear_attention.find(name);
      if (a == cand.linear_attention.end()) {
        out.only_in_reference.push_back("tp" + std::to_string(tp) + "/linear_attention/" + name);
        continue;
      }
      Tally t;
      if (!r.prefill.empty() && !a->second.prefill.empty()) {
        CompareTable(
            r.prefill, {"scan_chunks"}, [&](const auto& p) { return a->second.prefill.Lookup(p); },
            t, kinds["linear_attention"]);
      }
      if (!r.decode.empty() && !a->second.decode.empty()) {
        CompareTable(
            r.decode, {"n_decode"}, [&](const auto& p) { return a->second.decode.Lookup(p); }, t,
            kinds["linear_attention"]);
      }
      if (!r.mixed.empty() && !a->second.mixed.empty()) {
        CompareTable(
            r.mixed, {"scan_chunks", "n_decode"},
            [&](const auto& p) { return a->second.mixed.Lookup(p); }, t, kinds["linear_attention"]);
      }
      finish(t, "linear_attention", name);
    }
    if (ref.moe && cand.moe) {
      Tally t;
      CompareTable(
          *ref.moe, {"tokens", "experts"}, [&](const auto& p) { return cand.moe->Lookup(p); }, t,
          kinds["moe"]);
      finish(t, "moe", std::string(NameOf(Kernel::kMoe)));
    }
    for (auto& [kind, tally] : kinds) {
      if (tally.empty()) continue;
      out.kinds.push_back(tally.Summary(tp, kind, "all"));
      const KindSum* sum = kind == "dense"          ? &dense_sum
                           : kind == "per_sequence" ? &per_sequence_sum
                                                    : nullptr;
      if (sum && sum->worth_reporting()) {
        KernelError total = sum->Summary(tp, kind, {kind == "dense" ? "tokens" : "sequences"});
        if (total.cells > 0) out.kinds.push_back(std::move(total));
      }
    }
  }
  return out;
}

}  // namespace fleetsim
