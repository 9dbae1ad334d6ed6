#include "core/json_lines.h"

#include "core/input_error.h"

namespace fleetsim {

JsonLines::JsonLines(const std::string& path) : path_(path), in_(path) {
  if (!in_) throw InputError(path, 0, "", "cannot open file");
}

void JsonLines::Fail(const std::string& field, const std::string& message) const {
  throw InputError(path_, line_, field, message);
}

bool JsonLines::Next() {
  while (std::getline(in_, text_)) {
    ++line_;
    // A byte-order mark some editors put at the start of a UTF-8 file.
    if (line_ == 1 && text_.rfind("\xEF\xBB\xBF", 0) == 0) text_.erase(0, 3);
    if (text_.find_first_not_of(" \t\r") == std::string::npos) continue;
    std::string error;
    if (!current_.Parse(text_, error)) Fail("", error);
    return true;
  }
  return false;
}

const JsonValue* JsonLines::Present(const char* key) const {
  const JsonValue* value = current_.Find(key);
  return value == nullptr || value->is_null() ? nullptr : value;
}

bool JsonLines::Has(const char* key) const {
  return Present(key) != nullptr;
}

const JsonValue& JsonLines::Required(const char* key) const {
  const JsonValue* value = Present(key);
  if (value == nullptr) Fail(key, "missing field");
  return *value;
}

int64_t JsonLines::Int(const char* key) const {
  int64_t out = 0;
  if (!Required(key).ToInt64(out)) Fail(key, "expected an integer");
  return out;
}

double JsonLines::Number(const char* key) const {
  double out = 0;
  if (!Required(key).ToDouble(out)) Fail(key, "expected a number");
  return out;
}

std::optional<std::string> JsonLines::OptionalText(const char* key) const {
  const JsonValue* value = Present(key);
  if (value == nullptr) return std::nullopt;
  std::string out;
  if (!value->ToText(out)) Fail(key, "expected a string or a number");
  return out;
}

std::optional<std::vector<uint64_t>> JsonLines::OptionalUint64List(const char* key) const {
  const JsonValue* value = Present(key);
  if (value == nullptr) return std::nullopt;
  std::vector<uint64_t> out;
  if (!value->ToUint64List(out)) Fail(key, "expected a list of non-negative integers");
  return out;
}

}  // namespace fleetsim
