// The workload generator's random streams: one per entity. A stream's seed hashes (spec
// seed, purpose, entity ids), so that request 7's lengths never depend on how many draws
// request 6 took, nor on num_requests. The generator and distributions are core's `Rng`.
//
//   Rng lengths(StreamSeed(seed, StreamPurpose::kLengths, request_index));
//   double gap_s = lengths.Exponential() / rate_per_s;
#pragma once

#include <cstdint>

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
  kClass = 10,  // which request class (model, lengths) a request or session belongs to
};

// Folds `value` into the running hash `h`; distinct values give distinct results.
uint64_t HashCombine(uint64_t h, uint64_t value);
// The seed of the stream (or content id) for `purpose` of entity (a, b).
uint64_t StreamSeed(uint64_t seed, StreamPurpose purpose, uint64_t a = 0, uint64_t b = 0);

}  // namespace fleetsim::workload_gen
