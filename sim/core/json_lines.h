// Reads a JSON-lines file one object at a time (never whole), keeping the line number
// for errors. Blank lines are skipped; a line that is not one JSON object is an InputError.
//
//   JsonLines lines("trace.jsonl");
//   while (lines.Next()) use(lines.Int("input_tokens"));  // errors name file, line, field
#pragma once

#include <cstdint>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "core/json_object.h"

namespace fleetsim {

class JsonLines {
 public:
  explicit JsonLines(const std::string& path);

  // Moves to the next object; false at the end of the file.
  bool Next();
  const std::string& path() const { return path_; }
  int line() const { return line_; }
  [[noreturn]] void Fail(const std::string& field, const std::string& message) const;

  // Fields of the current object. A field that is absent or null is "missing"; the
  // required forms fail on it, naming the field.
  bool Has(const char* key) const;
  int64_t Int(const char* key) const;
  double Number(const char* key) const;
  // The field as text (a string, or a number's digits), or nullopt when missing.
  std::optional<std::string> OptionalText(const char* key) const;
  // A list of non-negative integers, or nullopt when missing.
  std::optional<std::vector<uint64_t>> OptionalUint64List(const char* key) const;

 private:
  const JsonValue* Present(const char* key) const;
  const JsonValue& Required(const char* key) const;  // fails on a missing field

  std::string path_;
  std::ifstream in_;
  int line_ = 0;
  std::string text_;  // the current line, which current_'s views point into
  JsonObject current_;
};

}  // namespace fleetsim
