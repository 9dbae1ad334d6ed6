// Tokens of an instance's steps by the interval their end falls in: what the fleet's
// /timeseries sums into its throughput columns (fleet/timeseries.h). An instance can keep
// it itself (Instance::TallyTokens), without building a step record per step.
#pragma once

#include <cstdint>
#include <vector>

namespace fleetsim {

// Tokens of one instance's steps that ended in one interval.
struct TokenTally {
  int64_t bucket = 0;
  int64_t prompt_tokens = 0;
  int64_t generated_tokens = 0;
};

// Adds a step's tokens to `tally`, merging with the last entry when in the same interval.
inline void AddTokens(std::vector<TokenTally>& tally, int64_t bucket, int64_t prompt_tokens,
                      int64_t generated_tokens) {
  if (tally.empty() || tally.back().bucket != bucket) tally.push_back({bucket, 0, 0});
  tally.back().prompt_tokens += prompt_tokens;
  tally.back().generated_tokens += generated_tokens;
}

}  // namespace fleetsim
