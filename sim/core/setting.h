// A setting declared once, by the code that owns it: its key, type, default, accepted
// range, unit and a line of help. Every reader -- a cluster config, a command line, a
// run's meta.json, a sweep point -- takes the default and the range from the declaration,
// so a rule cannot differ between entry points, and a test checks docs/CLUSTER_CONFIG.md's
// key tables against the declarations.
//
//   inline constexpr Setting<double> kGpuMemoryUtilization{
//       {"gpu_memory_utilization", SettingType::kNumber, SettingRange::UnitInterval(),
//        "fraction", "", "Fraction of GPU memory vLLM may use"},
//       0.9};
//   double u = kGpuMemoryUtilization.Read(engine_section);   // 0.9 when absent
//   kGpuMemoryUtilization.Check(u, error);                   // "must be in (0, 1]"
#pragma once

#include <cmath>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include "core/input_error.h"
#include "core/yaml_section.h"

namespace fleetsim {

// Builds the error for a setting, so that the caller says where settings came from (a
// command-line option, a line of a cluster config, a field of a run's meta.json).
using SettingError =
    std::function<InputError(std::string_view setting, const std::string& message)>;

enum class SettingType { kInteger, kNumber, kBool, kString, kMapping, kList };
// As the docs' type column spells it: "integer", "number", "bool", "string", ...
std::string_view NameOf(SettingType type);

// The accepted values of a numeric setting: each end open, closed or unbounded. NaN is
// never accepted.
struct SettingRange {
  enum class End { kNone, kOpen, kClosed };
  End lower_end = End::kNone;
  double lower = 0;
  End upper_end = End::kNone;
  double upper = 0;

  static constexpr SettingRange Any() { return {}; }
  static constexpr SettingRange Positive() { return {End::kOpen, 0, End::kNone, 0}; }
  static constexpr SettingRange NonNegative() { return {End::kClosed, 0, End::kNone, 0}; }
  static constexpr SettingRange AtLeast(double x) { return {End::kClosed, x, End::kNone, 0}; }
  static constexpr SettingRange UnitInterval() { return {End::kOpen, 0, End::kClosed, 1}; }
  // (0, upper] and [lower, upper].
  static constexpr SettingRange PositiveUpTo(double upper) {
    return {End::kOpen, 0, End::kClosed, upper};
  }
  static constexpr SettingRange Between(double lower, double upper) {
    return {End::kClosed, lower, End::kClosed, upper};
  }

  bool Unbounded() const { return lower_end == End::kNone && upper_end == End::kNone; }
  bool Admits(double value) const;
  // The docs' rule: "> 0", ">= 1", ">= 0", "in (0, 1]"; empty when unbounded.
  std::string Rule() const;
  // The error's words: "must be positive", "must be at least 1", "must not be negative",
  // "must be in (0, 1]".
  std::string Requirement() const;
};

struct SettingSpec {
  std::string_view key;  // as configs spell it (vLLM's name for engine settings)
  SettingType type = SettingType::kString;
  SettingRange range;
  std::string_view unit;  // "s", "us", "bytes", "tokens", "fraction", ... or empty
  // The docs' default column when it is not the plain default value ("required",
  // "1024 on GPUs >= 70 GiB, else 256", "auto (the model's dtype)").
  std::string_view default_text;
  std::string_view help;  // one line, for --help and the docs
  // Appended to a range error, e.g. "(0 turns it off)".
  std::string_view note = {};

  // "must be positive (seconds)" and the like, or nothing when `value` is accepted.
  std::optional<std::string> Violation(double value) const;
  // The command-line option for this setting: "--max-num-seqs".
  std::string OptionName() const;
};

// The command-line option for a setting's key: "max_num_seqs" -> "--max-num-seqs".
std::string OptionNameOf(std::string_view key);

// A setting whose value is a T (int, int64_t, double, bool or std::string_view). A
// `fallback` of nullopt means no fixed default: the setting is required, or resolved later
// from other settings (the docs' default column then says how).
template <typename T>
struct Setting {
  SettingSpec spec;
  std::optional<T> fallback = std::nullopt;

  using Value = std::conditional_t<std::is_same_v<T, std::string_view>, std::string, T>;

  constexpr std::string_view key() const { return spec.key; }
  constexpr T Default() const { return *fallback; }

  // Throws error(key, ...) when `value` is outside the range.
  void Check(const Value& value, const SettingError& error) const {
    if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
      if (auto violation = spec.Violation(static_cast<double>(value)))
        throw error(spec.key, *violation);
    }
  }
  // The value in `section`, range-checked; nullopt when absent.
  std::optional<Value> Find(const YamlSection& section) const {
    std::optional<Value> value = section.Find<Value>(spec.key);
    if (value) Check(*value, FailIn(section));
    return value;
  }
  // The value in `section`, range-checked; an error when absent.
  Value Get(const YamlSection& section) const {
    Value value = section.Get<Value>(spec.key);
    Check(value, FailIn(section));
    return value;
  }
  // The value in `section` (range-checked), or the default when absent.
  Value Read(const YamlSection& section) const {
    std::optional<Value> value = Find(section);
    return value ? *value : Value(Default());
  }

 private:
  static SettingError FailIn(const YamlSection& section) {
    return [&section](std::string_view key, const std::string& message) -> InputError {
      section.Fail(key, message);
    };
  }
};

// A setting as the docs list it: its declaration and its default as text -- the spec's
// default_text, else the default value ("0.9", "true", "auto"), else "--".
struct SettingDoc {
  SettingSpec spec;
  std::string default_text;
};

// A key without a value of its own (a mapping or a list): its default_text, else "--".
SettingDoc DocOf(const SettingSpec& spec);

std::string DefaultValueText(double value);
std::string DefaultValueText(bool value);
std::string DefaultValueText(std::string_view value);

template <typename T>
SettingDoc DocOf(const Setting<T>& setting) {
  SettingDoc doc{setting.spec, std::string(setting.spec.default_text)};
  if (doc.default_text.empty()) {
    if (!setting.fallback) {
      doc.default_text = "--";
    } else if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, std::string_view>) {
      doc.default_text = DefaultValueText(*setting.fallback);
    } else {
      doc.default_text = DefaultValueText(static_cast<double>(*setting.fallback));
    }
  }
  return doc;
}

}  // namespace fleetsim
