// Seeded random streams for the workload generator. The generator and every distribution
// are our own, because std::*_distribution differs between standard libraries and the same
// spec and seed must give the same requests wherever fleetsim is built.
//
// One stream per entity: a stream's seed hashes (spec seed, purpose, entity ids), so that
// request 7's lengths never depend on how many draws request 6 took, nor on num_requests.
//
//   Rng lengths(StreamSeed(seed, StreamPurpose::kLengths, request_index));
//   double gap_s = lengths.Exponential() / rate_per_s;
#pragma once

#include <cstdint>

#include "core/hash64.h"

namespace fleetsim::workload_gen {

// What a stream (or a piece of prompt content) is for; part of its seed, so streams of
// different purposes never coincide. Values are fixed: changing one changes every output.
enum class StreamPurpose : uint64_t {
  kArrivals = 1,
  kLengths = 2,
  kSessionTurns = 3,
  kThinkTime = 4,
  kSystemPrompt = 5,
  kUserMessage = 6,
  kOutput = 7,
  kPrompt = 8,
  kSharedPrefix = 9,
};

// Folds `value` into the running hash `h`; distinct values give distinct results.
uint64_t HashCombine(uint64_t h, uint64_t value);
// The seed of the stream (or content id) for `purpose` of entity (a, b).
uint64_t StreamSeed(uint64_t seed, StreamPurpose purpose, uint64_t a = 0, uint64_t b = 0);

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

 private:
  uint64_t state_;
};

}  // namespace fleetsim::workload_gen
