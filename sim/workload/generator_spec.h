// The parsed `generator:` section of a workload spec file (the format is documented in
// workload/generator.h). Parsing checks everything up front, so that generating never
// fails halfway through a run.
//
//   GeneratorSpec spec = GeneratorSpec::Parse(LoadYamlFile("chat.yaml"));
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

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

// One class of requests in a mixed workload: its share, the model it asks for, and its
// own lengths (else the spec's).
struct RequestClassSpec {
  double weight = 1;   // > 0; shares are weight / sum of weights
  std::string model;   // "": the spec's model
  int model_line = 0;  // the line naming it, for errors about the model
  std::optional<LengthDistribution> input_tokens;
  std::optional<LengthDistribution> output_tokens;
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
  std::string model;        // every request's model unless its class names one ("": none)
  int model_line = 0;
  // Without classes, one class of everything above. With them, each request (a session:
  // each conversation) draws its class by weight from its own stream.
  std::vector<RequestClassSpec> classes;

  // `doc` is the whole file; InputErrors name the file, the line and the key.
  static GeneratorSpec Parse(const YamlSection& doc);
};

}  // namespace fleetsim::workload_gen
