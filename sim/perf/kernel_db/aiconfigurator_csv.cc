#include "perf/kernel_db/aiconfigurator_csv.h"

#include <cmath>
#include <string>

namespace fleetsim {

double AiconfiguratorLatencyUs(const CsvReader& csv) {
  const double ms = csv.Number("latency");
  if (!std::isfinite(ms) || ms <= 0) csv.Fail("latency", "must be a positive number of ms");
  return ms * 1000;
}

int64_t PositiveCount(const CsvReader& csv, std::string_view column) {
  const int64_t value = csv.Int(column);
  if (value <= 0) csv.Fail(column, "must be positive, got " + std::to_string(value));
  return value;
}

}  // namespace fleetsim
