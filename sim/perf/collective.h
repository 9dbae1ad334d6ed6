// The modelled tensor-parallel all-reduce: a ring over `ranks` GPUs of one node, costed
// with the alpha-beta model from the hardware catalog's intra-node link:
//   time = 2 (p - 1) x latency + 2 (p - 1) / p x bytes / bandwidth
// (each of the 2 (p - 1) ring steps pays one link latency and moves bytes / p).
#pragma once

#include <cstdint>

namespace fleetsim {

struct AllReduceModel {
  int ranks = 1;
  double bandwidth_bytes_per_s = 0;  // per GPU, per direction
  double latency_s = 0;

  // Nanoseconds for one all-reduce of `bytes` (0 for a single rank).
  double Nanoseconds(int64_t bytes) const;
};

}  // namespace fleetsim
