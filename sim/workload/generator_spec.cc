#include "workload/generator_spec.h"

#include <limits>
#include <memory>
#include <string>

#include "core/input_error.h"
#include "workload/generator_fields.h"
#include "workload/workload_source.h"

namespace fleetsim::workload_gen {
namespace {

SessionSpec ParseSessions(const YamlSection& s) {
  s.RejectUnknownKeys({"count", "turns", "think_time_s", "system_prompt_tokens"});
  SessionSpec spec;
  if (s.Has("count")) spec.count = GetCount(s, "count");
  spec.turns = LengthDistribution::Parse(s.Child("turns"), LengthOf::kTurns, /*seed=*/0);
  spec.think_time_s = GetNumber(s, "think_time_s", kNonNegative, 0.0);
  if (spec.think_time_s > kMaxSimSeconds)
    s.Fail("think_time_s", "must be at most 1e9 s (the largest simulated time)");
  spec.system_prompt_tokens = s.GetOr<int64_t>("system_prompt_tokens", 0);
  if (spec.system_prompt_tokens < 0 || spec.system_prompt_tokens > LengthDistribution::kMaxLength) {
    s.Fail("system_prompt_tokens", "must be in [0, " +
                                       std::to_string(LengthDistribution::kMaxLength) + "], got " +
                                       std::to_string(spec.system_prompt_tokens));
  }
  return spec;
}

SharedPrefixSpec ParseSharedPrefix(const YamlSection& s) {
  s.RejectUnknownKeys({"tokens", "fraction"});
  SharedPrefixSpec spec;
  spec.tokens = GetCount(s, "tokens");
  if (spec.tokens > LengthDistribution::kMaxLength) {
    s.Fail("tokens", "must be at most " + std::to_string(LengthDistribution::kMaxLength) +
                         ", got " + std::to_string(spec.tokens));
  }
  spec.fraction = GetNumber(s, "fraction", kNonNegative, 1.0);
  if (spec.fraction > 1) s.Fail("fraction", "must be at most 1");
  return spec;
}

// `model:` of the spec or a class: a model name (workload_source.h's rules).
void ReadModel(const YamlSection& s, std::string& model, int& line) {
  if (!s.Has("model")) return;
  model = s.Get<std::string>("model");
  if (auto problem = ModelNameViolation(model)) s.Fail("model", *problem);
  line = s.LineOf("model");
}

std::vector<RequestClassSpec> ParseClasses(const YamlSection& s, uint64_t seed) {
  const YAML::Node list = s.node()["classes"];
  if (!list.IsSequence() || list.size() == 0)
    s.Fail("classes", "expected a non-empty list of mappings ({weight, model, ...})");
  auto file = std::make_shared<const std::string>(s.file());
  std::vector<RequestClassSpec> classes;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const YamlSection c(list[i], file, s.FieldPath("classes") + "[" + std::to_string(i) + "]");
    if (!list[i].IsMap()) throw InputError(s.file(), c.line(), c.path(), "expected a mapping");
    c.RejectUnknownKeys({"weight", "model", "input_tokens", "output_tokens"});
    RequestClassSpec spec;
    spec.weight = GetNumber(c, "weight", kPositive, 1.0);
    ReadModel(c, spec.model, spec.model_line);
    if (auto in = c.FindChild("input_tokens"))
      spec.input_tokens = LengthDistribution::Parse(*in, LengthOf::kInputTokens, seed);
    if (auto out = c.FindChild("output_tokens"))
      spec.output_tokens = LengthDistribution::Parse(*out, LengthOf::kOutputTokens, seed);
    classes.push_back(std::move(spec));
  }
  return classes;
}

}  // namespace

GeneratorSpec GeneratorSpec::Parse(const YamlSection& doc) {
  doc.RejectUnknownKeys({"generator"});
  const YamlSection s = doc.Child("generator");
  s.RejectUnknownKeys({"seed", "num_requests", "duration_s", "arrivals", "input_tokens",
                       "output_tokens", "sessions", "shared_prefix", "hash_block_size", "model",
                       "classes"});
  GeneratorSpec spec;
  const int64_t seed = s.GetOr<int64_t>("seed", 0);
  if (seed < 0) s.Fail("seed", "must be >= 0, got " + std::to_string(seed));
  spec.seed = static_cast<uint64_t>(seed);

  if (s.Has("num_requests")) spec.num_requests = GetCount(s, "num_requests");
  if (s.Has("duration_s")) {
    const double duration_s = GetNumber(s, "duration_s", kPositive);
    // Keep SimTime arithmetic (arrival + think time) far from int64 overflow.
    if (duration_s > 1e9) s.Fail("duration_s", "must be at most 1e9 s");
    spec.duration = SecondsToSimTime(duration_s);
  }
  if (!spec.num_requests && !spec.duration)
    s.Fail("num_requests", "missing: set num_requests, duration_s or both");

  spec.arrivals = ArrivalSpec::Parse(s.Child("arrivals"));
  spec.input_tokens =
      LengthDistribution::Parse(s.Child("input_tokens"), LengthOf::kInputTokens, spec.seed);
  spec.output_tokens =
      LengthDistribution::Parse(s.Child("output_tokens"), LengthOf::kOutputTokens, spec.seed);
  if (auto sessions = s.FindChild("sessions")) spec.sessions = ParseSessions(*sessions);
  if (auto shared = s.FindChild("shared_prefix")) {
    if (spec.sessions) {
      s.Fail("shared_prefix",
             "applies to independent requests; sessions share sessions.system_prompt_tokens");
    }
    spec.shared_prefix = ParseSharedPrefix(*shared);
  }
  if (s.Has("hash_block_size")) {
    const int64_t block = GetCount(s, "hash_block_size");
    if (block > std::numeric_limits<int>::max()) s.Fail("hash_block_size", "is too large");
    spec.hash_block_size = static_cast<int>(block);
  }
  ReadModel(s, spec.model, spec.model_line);
  if (s.Has("classes")) spec.classes = ParseClasses(s, spec.seed);
  return spec;
}

}  // namespace fleetsim::workload_gen
