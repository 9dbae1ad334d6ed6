#include "perf/collective.h"

namespace fleetsim {

double AllReduceModel::Nanoseconds(int64_t bytes) const {
  if (ranks <= 1) return 0;
  const double p = ranks;
  const double seconds = 2 * (p - 1) * latency_s +
                         2 * (p - 1) / p * static_cast<double>(bytes) / bandwidth_bytes_per_s;
  return seconds * 1e9;
}

}  // namespace fleetsim
