#include "perf/kernel_db/kernel_error.h"

#include <algorithm>
#include <cmath>

namespace fleetsim {

ErrorSummary SummarizeErrors(std::span<const MeasuredKernel> rows, KernelClass cls,
                             const KernelPredictor& predictor) {
  ErrorSummary s;
  double abs_sum = 0;
  double sum = 0;
  for (const MeasuredKernel& k : rows) {
    if (k.cls != cls) continue;
    const double error = (predictor.Us(k) - k.measured_us) / k.measured_us;
    abs_sum += std::abs(error);
    sum += error;
    ++s.rows;
  }
  if (s.rows > 0) {
    s.mape = abs_sum / static_cast<double>(s.rows);
    s.bias = sum / static_cast<double>(s.rows);
  }
  return s;
}

ClassError KernelErrorReport::Of(KernelClass cls) const {
  for (const ClassError& c : classes) {
    if (c.cls == cls) return c;
  }
  ClassError none;
  none.cls = cls;
  return none;
}

KernelErrorReport CompareWithMeasured(std::span<const MeasuredKernel> rows,
                                      const KernelPredictor& predictor) {
  KernelErrorReport report;
  for (KernelClass cls : kKernelClasses) {
    ClassError c;
    c.cls = cls;
    c.summary = SummarizeErrors(rows, cls, predictor);
    if (c.summary.rows == 0) continue;
    // The worst rows: a bounded selection, ties broken by line so the report is stable.
    std::vector<RowError> all;
    for (const MeasuredKernel& k : rows) {
      if (k.cls != cls) continue;
      const double predicted = predictor.Us(k);
      all.push_back(
          {k.line, "", k.measured_us, predicted, (predicted - k.measured_us) / k.measured_us});
    }
    const auto worse = [](const RowError& a, const RowError& b) {
      const double ea = std::abs(a.error);
      const double eb = std::abs(b.error);
      return ea != eb ? ea > eb : a.line < b.line;
    };
    const auto keep = std::min<std::size_t>(all.size(), kWorstRows);
    std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(keep), all.end(),
                      worse);
    all.resize(keep);
    c.worst = std::move(all);
    report.classes.push_back(std::move(c));
  }
  // Describe only the few rows kept (a string per row of 60k would dominate the time).
  for (ClassError& c : report.classes) {
    for (RowError& r : c.worst) {
      for (const MeasuredKernel& k : rows) {
        if (k.cls == c.cls && k.line == r.line) {
          r.shape = Describe(k);
          break;
        }
      }
    }
  }
  return report;
}

KernelErrorReport CompareWithMeasured(const MeasuredTables& tables,
                                      const KernelPredictor& predictor) {
  KernelErrorReport report = CompareWithMeasured(tables.rows, predictor);
  report.system = tables.files.system;
  for (ClassError& c : report.classes)
    c.file = tables.files.Of(c.cls).string();
  return report;
}

KernelErrorReport CompareWithMeasured(const MeasuredTables& tables,
                                      const KernelRoofline& roofline) {
  return CompareWithMeasured(tables, KernelPredictor(roofline));
}

void WriteJson(JsonWriter& json, const ErrorSummary& s) {
  json.BeginObject();
  json.Field("rows", s.rows);
  json.Field("mape", s.mape);
  json.Field("bias", s.bias);
  json.EndObject();
}

void WriteJson(JsonWriter& json, const KernelErrorReport& report) {
  json.BeginObject();
  json.Field("system", report.system);
  json.Key("classes");
  json.BeginArray();
  for (const ClassError& c : report.classes) {
    json.BeginObject();
    json.Field("class", NameOf(c.cls));
    json.Field("file", c.file);
    json.Field("rows", c.summary.rows);
    json.Field("mape", c.summary.mape);
    json.Field("bias", c.summary.bias);
    json.Key("worst");
    json.BeginArray();
    for (const RowError& r : c.worst) {
      json.BeginObject();
      json.Field("line", r.line);
      json.Field("shape", r.shape);
      json.Field("measured_us", r.measured_us);
      json.Field("predicted_us", r.predicted_us);
      json.Field("error", r.error);
      json.EndObject();
    }
    json.EndArray();
    json.EndObject();
  }
  json.EndArray();
  json.EndObject();
}

}  // namespace fleetsim
