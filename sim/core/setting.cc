#include "core/setting.h"

#include "core/format.h"

namespace fleetsim {

std::string_view NameOf(SettingType type) {
  switch (type) {
    case SettingType::kInteger:
      return "integer";
    case SettingType::kNumber:
      return "number";
    case SettingType::kBool:
      return "bool";
    case SettingType::kString:
      return "string";
    case SettingType::kMapping:
      return "mapping";
    case SettingType::kList:
      return "list";
  }
  return "unknown";
}

bool SettingRange::Admits(double value) const {
  if (std::isnan(value)) return false;
  if (lower_end == End::kOpen && !(value > lower)) return false;
  if (lower_end == End::kClosed && !(value >= lower)) return false;
  if (upper_end == End::kOpen && !(value < upper)) return false;
  if (upper_end == End::kClosed && !(value <= upper)) return false;
  return true;
}

std::string SettingRange::Rule() const {
  if (lower_end != End::kNone && upper_end != End::kNone) {
    return std::string("in ") + (lower_end == End::kOpen ? "(" : "[") + ShortestNumber(lower) +
           ", " + ShortestNumber(upper) + (upper_end == End::kOpen ? ")" : "]");
  }
  if (lower_end != End::kNone)
    return (lower_end == End::kOpen ? "> " : ">= ") + ShortestNumber(lower);
  if (upper_end != End::kNone)
    return (upper_end == End::kOpen ? "< " : "<= ") + ShortestNumber(upper);
  return "";
}

std::string SettingRange::Requirement() const {
  if (lower_end != End::kNone && upper_end != End::kNone) return "must be " + Rule();
  if (lower_end == End::kOpen && lower == 0) return "must be positive";
  if (lower_end == End::kClosed && lower == 0) return "must not be negative";
  if (lower_end == End::kClosed) return "must be at least " + ShortestNumber(lower);
  if (lower_end == End::kOpen) return "must be above " + ShortestNumber(lower);
  if (upper_end == End::kClosed) return "must be at most " + ShortestNumber(upper);
  if (upper_end == End::kOpen) return "must be below " + ShortestNumber(upper);
  return "";
}

std::optional<std::string> SettingSpec::Violation(double value) const {
  if (range.Admits(value)) return std::nullopt;
  std::string message = range.Unbounded() ? "must be a number" : range.Requirement();
  if (!note.empty()) message += " " + std::string(note);
  return message;
}

std::string SettingSpec::OptionName() const {
  return OptionNameOf(key);
}

std::string OptionNameOf(std::string_view key) {
  std::string option = "--" + std::string(key);
  for (char& c : option)
    c = c == '_' ? '-' : c;
  return option;
}

SettingDoc DocOf(const SettingSpec& spec) {
  return {spec, spec.default_text.empty() ? "--" : std::string(spec.default_text)};
}

std::string DefaultValueText(double value) {
  return ShortestNumber(value);
}

std::string DefaultValueText(bool value) {
  return value ? "true" : "false";
}

std::string DefaultValueText(std::string_view value) {
  return std::string(value);
}

}  // namespace fleetsim
