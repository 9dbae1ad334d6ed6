// Checked numeric fields of a generator spec, so every bound error reads the same way:
//
//   int64_t n = GetCount(section, "num_requests");             // required, >= 1
//   double rate = GetNumber(section, "rate_per_s", kPositive);  // required, finite, > 0
//   // -> "spec.yaml:3: generator.arrivals.rate_per_s: must be > 0, got '-2'"
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "core/yaml_section.h"

namespace fleetsim::workload_gen {

enum NumberBound { kPositive, kNonNegative };

// An integer >= 1; `fallback` when the key is absent (required when there is none).
int64_t GetCount(const YamlSection& s, std::string_view key,
                 std::optional<int64_t> fallback = std::nullopt);
// A finite number within `bound`; `fallback` when the key is absent.
double GetNumber(const YamlSection& s, std::string_view key, NumberBound bound,
                 std::optional<double> fallback = std::nullopt);

}  // namespace fleetsim::workload_gen
