// How far the analytic model is from measured kernels, per kernel class: rows, MAPE
// (mean |pred - meas| / meas), bias (mean (pred - meas) / meas, > 0 = too slow) and the
// rows it misses most, as a struct that writes itself as JSON.
//
//   MeasuredTables h200 = LoadMeasuredKernels(dir, "h200_sxm");
//   KernelErrorReport r = CompareWithMeasured(h200, KernelRoofline(h200_spec, dtype));
//   r.Of(KernelClass::kGemm).mape;  // 0.18
//   JsonWriter json(std::cout); WriteJson(json, r);
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/json_writer.h"
#include "perf/kernel_db/kernel_predictor.h"
#include "perf/kernel_db/measured_kernels.h"

namespace fleetsim {

// MAPE and bias of one set of rows, without the details.
struct ErrorSummary {
  int64_t rows = 0;
  double mape = 0;
  double bias = 0;
};

struct RowError {
  int line = 0;
  std::string shape;  // Describe(row)
  double measured_us = 0;
  double predicted_us = 0;
  double error = 0;  // (pred - meas) / meas
};

struct ClassError {
  KernelClass cls = KernelClass::kGemm;
  std::string file;  // the table the rows come from
  ErrorSummary summary;
  std::vector<RowError> worst;  // largest |error| first, at most kWorstRows
};

inline constexpr int kWorstRows = 5;

struct KernelErrorReport {
  std::string system;
  std::vector<ClassError> classes;  // the classes with rows, in kKernelClasses order

  // The class's entry; one with 0 rows when the system has none.
  ClassError Of(KernelClass cls) const;
};

// Errors of the rows of class `cls` among `rows` (fast: what calibration evaluates).
ErrorSummary SummarizeErrors(std::span<const MeasuredKernel> rows, KernelClass cls,
                             const KernelPredictor& predictor);

// Per class of `rows`: summary and worst rows. The report names no system or files.
KernelErrorReport CompareWithMeasured(std::span<const MeasuredKernel> rows,
                                      const KernelPredictor& predictor);
// The same for one system's tables, naming the system and each class's file.
KernelErrorReport CompareWithMeasured(const MeasuredTables& tables,
                                      const KernelPredictor& predictor);
// Today's model: the roofline with its constants, no proposed terms.
KernelErrorReport CompareWithMeasured(const MeasuredTables& tables, const KernelRoofline& roofline);

void WriteJson(JsonWriter& json, const ErrorSummary& summary);
void WriteJson(JsonWriter& json, const KernelErrorReport& report);

}  // namespace fleetsim
