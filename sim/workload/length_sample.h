// A bounded, uniform sample of one token count (prompt or output) of a real trace, for the
// `trace` length distribution of a generator spec (workload/generator_lengths.h).
//
// The trace is streamed once, through OpenWorkload (any supported format), and kept as a
// reservoir of at most `capacity` values (Vitter's Algorithm R), so memory is bounded
// whatever the trace's size. The reservoir is drawn from our own Rng, so the same trace,
// capacity and seed give the same sample with any compiler or standard library.
//
//   TraceLengthSample s = TraceLengthSample::Load("conv.csv", "auto", TraceField::kInput,
//                                                 100'000, reservoir_seed);
//   Rng rng(StreamSeed(seed, StreamPurpose::kLengths, request_index));
//   int64_t tokens = s.Draw(rng);   // one reservoir value, uniformly
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/random.h"

namespace fleetsim::workload_gen {

enum class TraceField { kInput, kOutput };

class TraceLengthSample {
 public:
  // Reads every request of the trace at `path` (`format` as for OpenWorkload; a generator
  // spec is not a trace and must be refused by the caller). A trace that does not open or
  // has a malformed line throws OpenWorkload's InputError. An empty trace gives an empty
  // sample. `capacity` >= 1.
  static TraceLengthSample Load(const std::string& path, const std::string& format,
                                TraceField field, int64_t capacity, uint64_t seed);

  // One value of the sample, uniformly; the sample must not be empty.
  int64_t Draw(Rng& rng) const;

  // The reservoir: min(rows(), capacity) trace values.
  const std::vector<int64_t>& values() const { return values_; }
  // Requests read from the trace.
  int64_t rows() const { return rows_; }

 private:
  std::vector<int64_t> values_;
  int64_t rows_ = 0;
};

// Uniform in [0, n) without modulo bias: draws above the largest multiple of n are
// redrawn (fewer than one in 2^32 for n < 2^32). n >= 1.
uint64_t UniformBelow(Rng& rng, uint64_t n);

}  // namespace fleetsim::workload_gen
