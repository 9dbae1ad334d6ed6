// Seeded random streams: SplitMix64 and our own distributions on top, because
// std::*_distribution differs between standard libraries and the same seed must give the
// same draws wherever fleetsim is built. Shared by the workload generators (one stream per
// request or session, see workload/generator_random.h) and the routers (one per gateway).
//
//   Rng rng(seed);
//   double gap_s = rng.Exponential() / rate_per_s;
#pragma once

#include <cstdint>

#include "core/hash64.h"

namespace fleetsim {

// SplitMix64: tiny state, passes BigCrush, and any 64-bit seed is a good one.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}

  uint64_t NextU64();
  // Uniform in [0, 1), 53 random bits.
  double Uniform();
  // Exponential with mean 1, by inversion: -log(1 - u), never log(0).
  double Exponential();
  // Standard normal by Marsaglia's polar form of Box-Muller (no sin/cos; one value per
  // call, the second is dropped so that a call's draws do not depend on earlier calls).
  double Normal();
  // Gamma(shape, scale 1) by Marsaglia & Tsang (2000); shape < 1 boosted by U^(1/shape).
  double Gamma(double shape);

  // The whole state: Rng(state()) continues the stream where this one stands (a
  // checkpoint saves it).
  uint64_t state() const { return state_; }

 private:
  uint64_t state_;
};

}  // namespace fleetsim
