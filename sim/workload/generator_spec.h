// The parsed `generator:` section of a workload spec file (the format is documented in
// workload/generator.h). Parsing checks everything up front, so that generating never
// fails halfway through a run.
//
//   GeneratorSpec spec = GeneratorSpec::Parse(LoadYamlFile("chat.yaml"));
#pragma once

#include <cstdint>
#include <optional>

#include "core/sim_time.h"
#include "core/yaml_section.h"
#include "workload/generator_arrivals.h"
#include "workload/generator_lengths.h"

namespace fleetsim::workload_gen {

struct SessionSpec {
  std::optional<int64_t> count;  // sessions started in all; none: until the stream stops
  LengthDistribution turns;
  double think_time_s = 0;  // mean of the exponential pause before each later turn
  int64_t system_prompt_tokens = 0;
};

struct SharedPrefixSpec {
  int64_t tokens = 0;   // the first `tokens` tokens of the prompt, the same in every request
  double fraction = 1;  // share of requests that start with it
};

struct GeneratorSpec {
  uint64_t seed = 0;
  std::optional<int64_t> num_requests;
  std::optional<SimTime> duration;  // requests arriving at or after it are not emitted
  ArrivalSpec arrivals;
  LengthDistribution input_tokens;
  LengthDistribution output_tokens;
  std::optional<SessionSpec> sessions;
  std::optional<SharedPrefixSpec> shared_prefix;
  int hash_block_size = 0;  // 0: no block hashes

  // `doc` is the whole file; InputErrors name the file, the line and the key.
  static GeneratorSpec Parse(const YamlSection& doc);
};

}  // namespace fleetsim::workload_gen
