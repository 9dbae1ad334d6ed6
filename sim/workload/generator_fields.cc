#include "workload/generator_fields.h"

#include <cmath>
#include <string>

#include "core/input_error.h"

namespace fleetsim::workload_gen {

int64_t GetCount(const YamlSection& s, std::string_view key, std::optional<int64_t> fallback) {
  const int64_t value = fallback ? s.GetOr<int64_t>(key, *fallback) : s.Get<int64_t>(key);
  if (value < 1) s.Fail(key, "must be >= 1, got " + std::to_string(value));
  return value;
}

double GetNumber(const YamlSection& s, std::string_view key, NumberBound bound,
                 std::optional<double> fallback) {
  const double value = fallback ? s.GetOr<double>(key, *fallback) : s.Get<double>(key);
  const bool ok = std::isfinite(value) && (bound == kPositive ? value > 0 : value >= 0);
  if (!ok) {
    // Quote the text as written: "-2", ".inf", not a reformatted double.
    const YAML::Node& map = s.node();
    s.Fail(key, std::string("must be ") + (bound == kPositive ? "> 0" : ">= 0") + ", got " +
                    QuoteInput(map[std::string(key)].Scalar()));
  }
  return value;
}

}  // namespace fleetsim::workload_gen
