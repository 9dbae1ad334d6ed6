#include "core/json_lines.h"

#include "core/input_error.h"

namespace fleetsim {

JsonLines::JsonLines(const std::string& path) : path_(path), in_(path) {
  if (!in_) throw InputError(path, 0, "", "cannot open file");
}

void JsonLines::Fail(const std::string& field, const std::string& message) const {
  throw InputError(path_, line_, field, message);
}

const YAML::Node* JsonLines::Next() {
  std::string text;
  while (std::getline(in_, text)) {
    ++line_;
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    try {
      current_ = YAML::Load(text);
    } catch (const YAML::Exception& e) {
      Fail("", "not a JSON object: " + e.msg);
    }
    if (!current_.IsMap()) Fail("", "not a JSON object");
    return &current_;
  }
  return nullptr;
}

}  // namespace fleetsim
