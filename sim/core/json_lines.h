// Reads a JSON-lines file one object at a time (never whole), keeping the line number
// for errors. Blank lines are skipped; a line that is not a JSON object is an InputError.
//
//   JsonLines lines("trace.jsonl");
//   while (const YAML::Node* row = lines.Next()) use((*row)["input_tokens"], lines.line());
#pragma once

#include <fstream>
#include <string>

#include <yaml-cpp/yaml.h>

namespace fleetsim {

class JsonLines {
 public:
  explicit JsonLines(const std::string& path);

  // The next object, or nullptr at the end of the file.
  const YAML::Node* Next();
  const std::string& path() const { return path_; }
  int line() const { return line_; }
  [[noreturn]] void Fail(const std::string& field, const std::string& message) const;

 private:
  std::string path_;
  std::ifstream in_;
  int line_ = 0;
  YAML::Node current_;
};

}  // namespace fleetsim
