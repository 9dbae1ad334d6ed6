// Typed, located access to one mapping of a YAML (or JSON) document.
//
// Every config file fleetsim reads goes through this, so that each error names the file,
// the line and the dotted field path, and says what would have been accepted:
//
//   YamlSection doc = LoadYamlFile("cluster_configs/hardware/H100-SXM.yaml");
//   int64_t bytes = doc.Child("memory_bytes").Get<int64_t>("value");
//   // -> "H100-SXM.yaml:4: memory_bytes.value: expected an integer, got '80GB'"
//
// JSON is read as YAML (yaml-cpp accepts it), which gives Hugging Face config.json files
// the same line-accurate errors. A key whose value is `null` counts as absent.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "core/input_error.h"

namespace fleetsim {

// What a value of type T looks like, for "expected ..., got ..." errors.
template <typename T>
const char* ExpectedYamlType() {
  if constexpr (std::is_same_v<T, bool>)
    return "true or false";
  else if constexpr (std::is_integral_v<T>)
    return "an integer";
  else if constexpr (std::is_floating_point_v<T>)
    return "a number";
  else
    return "a string";
}

class YamlSection {
 public:
  YamlSection(YAML::Node node, std::shared_ptr<const std::string> file, std::string path);

  const std::string& file() const { return *file_; }
  const std::string& path() const { return path_; }
  const YAML::Node& node() const { return node_; }
  int line() const { return node_.Mark().line + 1; }

  bool Has(std::string_view key) const;
  // The line of `key` (or of this section when the key is absent).
  int LineOf(std::string_view key) const;
  // The dotted path of `key` inside the document, e.g. "text_config.head_dim".
  std::string FieldPath(std::string_view key) const;

  template <typename T>
  T Get(std::string_view key) const;
  template <typename T>
  std::optional<T> Find(std::string_view key) const;
  template <typename T>
  T GetOr(std::string_view key, T fallback) const {
    return Find<T>(key).value_or(std::move(fallback));
  }
  template <typename T>
  std::vector<T> GetList(std::string_view key) const;

  YamlSection Child(std::string_view key) const;
  std::optional<YamlSection> FindChild(std::string_view key) const;
  std::vector<std::string> Keys() const;

  // Refuses any key not in `known`, naming the first unknown one and the accepted set.
  void RejectUnknownKeys(std::initializer_list<std::string_view> known) const;
  void RejectUnknownKeys(const std::vector<std::string_view>& known) const;

  [[noreturn]] void Fail(std::string_view key, const std::string& message) const;

 private:
  std::optional<YAML::Node> Lookup(std::string_view key) const;
  template <typename T>
  T Convert(const YAML::Node& value, std::string_view key) const;

  YAML::Node node_;
  std::shared_ptr<const std::string> file_;
  std::string path_;
};

// Parses a YAML or JSON file; a syntax error becomes an InputError with its line.
YamlSection LoadYamlFile(const std::string& path);

}  // namespace fleetsim
