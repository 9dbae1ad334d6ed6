#include "core/yaml_section.h"

#include <filesystem>
#include <fstream>
#include <ios>

#include "core/suggest.h"

namespace fleetsim {
namespace {

std::string Render(const YAML::Node& value) {
  if (value.IsScalar()) return QuoteInput(value.Scalar());
  if (value.IsSequence()) return "a list";
  if (value.IsMap()) return "a mapping";
  return "nothing";
}

// A plain (unquoted) scalar of a JSON file must be a JSON literal: true, false, null or a
// number as RFC 8259 writes it -- not YAML's 0x10, +1, 01, .nan or NaN.
bool IsJsonLiteral(const std::string& text) {
  if (text == "true" || text == "false" || text == "null") return true;
  std::size_t i = 0;
  const auto digits = [&] {
    const std::size_t from = i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9')
      ++i;
    return i - from;
  };
  if (i < text.size() && text[i] == '-') ++i;
  if (i < text.size() && text[i] == '0') {
    ++i;
  } else if (digits() == 0) {
    return false;
  }
  if (i < text.size() && text[i] == '.') {
    ++i;
    if (digits() == 0) return false;
  }
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    if (digits() == 0) return false;
  }
  return i == text.size();
}

// A mapping key that is a list or a mapping (YAML's `? [a, b]`): no config file has one,
// and yaml-cpp throws its own exception when one is read as text.
[[noreturn]] void FailNonScalarKey(const std::string& path, const YAML::Node& key,
                                   const std::string& field) {
  throw InputError(path, key.Mark().line + 1, EscapeInput(field),
                   "expected a key (a string), got " + Render(key));
}

// Refuses a key that is not a string, a key twice in one mapping (yaml-cpp would keep the
// first silently), and in a JSON file any plain scalar that is no JSON literal.
void CheckStrict(const YAML::Node& node, const std::string& path, const std::string& field,
                 bool json) {
  if (node.IsMap()) {
    std::vector<std::string> keys;
    for (const auto& entry : node) {
      if (!entry.first.IsScalar()) FailNonScalarKey(path, entry.first, field);
      const std::string key = entry.first.Scalar();
      const std::string at = field.empty() ? key : field + "." + key;
      for (const std::string& seen : keys) {
        if (seen == key)
          throw InputError(path, entry.first.Mark().line + 1, EscapeInput(at),
                           "duplicate key (it is already given above)");
      }
      keys.push_back(key);
      CheckStrict(entry.second, path, at, json);
    }
  } else if (node.IsSequence()) {
    for (std::size_t i = 0; i < node.size(); ++i)
      CheckStrict(node[i], path, field + "[" + std::to_string(i) + "]", json);
  } else if (json && node.IsScalar() && node.Tag() == "?" && !IsJsonLiteral(node.Scalar())) {
    throw InputError(path, node.Mark().line + 1, EscapeInput(field),
                     "expected a JSON value (a number as JSON writes it, true, false, null or a "
                     "quoted string), got " +
                         QuoteInput(node.Scalar()));
  }
}

}  // namespace

YamlSection::YamlSection(YAML::Node node, std::shared_ptr<const std::string> file, std::string path)
    : node_(std::move(node)), file_(std::move(file)), path_(std::move(path)) {}

std::optional<YAML::Node> YamlSection::Lookup(std::string_view key) const {
  if (!node_.IsMap()) return std::nullopt;
  // operator[] on a const node never inserts.
  const YAML::Node& map = node_;
  YAML::Node value = map[std::string(key)];
  if (!value.IsDefined() || value.IsNull()) return std::nullopt;
  return value;
}

bool YamlSection::Has(std::string_view key) const {
  return Lookup(key).has_value();
}

int YamlSection::LineOf(std::string_view key) const {
  std::optional<YAML::Node> value = Lookup(key);
  return value ? value->Mark().line + 1 : line();
}

std::string YamlSection::FieldPath(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

void YamlSection::Fail(std::string_view key, const std::string& message) const {
  throw InputError(*file_, LineOf(key), FieldPath(key), message);
}

template <typename T>
T YamlSection::Convert(const YAML::Node& value, std::string_view key) const {
  if (!value.IsScalar())
    Fail(key, std::string("expected ") + ExpectedYamlType<T>() + ", got " + Render(value));
  T out{};
  if (!YAML::convert<T>::decode(value, out)) {
    Fail(key, std::string("expected ") + ExpectedYamlType<T>() + ", got " + Render(value));
  }
  return out;
}

template <typename T>
std::optional<T> YamlSection::Find(std::string_view key) const {
  std::optional<YAML::Node> value = Lookup(key);
  if (!value) return std::nullopt;
  return Convert<T>(*value, key);
}

template <typename T>
T YamlSection::Get(std::string_view key) const {
  if (!node_.IsMap()) {
    throw InputError(*file_, line(), path_, "expected a mapping, got " + Render(node_));
  }
  std::optional<T> value = Find<T>(key);
  if (!value) Fail(key, std::string("missing required field (") + ExpectedYamlType<T>() + ")");
  return *value;
}

template <typename T>
std::vector<T> YamlSection::GetList(std::string_view key) const {
  std::optional<YAML::Node> list = Lookup(key);
  if (!list) return {};
  if (!list->IsSequence()) Fail(key, "expected a list, got " + Render(*list));
  std::vector<T> out;
  out.reserve(list->size());
  for (std::size_t i = 0; i < list->size(); ++i) {
    const YAML::Node element = (*list)[i];
    if (!element.IsScalar()) {
      throw InputError(
          *file_, element.Mark().line + 1, FieldPath(key) + "[" + std::to_string(i) + "]",
          std::string("expected ") + ExpectedYamlType<T>() + ", got " + Render(element));
    }
    T decoded{};
    if (!YAML::convert<T>::decode(element, decoded)) {
      throw InputError(
          *file_, element.Mark().line + 1, FieldPath(key) + "[" + std::to_string(i) + "]",
          std::string("expected ") + ExpectedYamlType<T>() + ", got " + Render(element));
    }
    out.push_back(std::move(decoded));
  }
  return out;
}

YamlSection YamlSection::Child(std::string_view key) const {
  std::optional<YamlSection> child = FindChild(key);
  if (!child) Fail(key, "missing required section");
  return *child;
}

std::optional<YamlSection> YamlSection::FindChild(std::string_view key) const {
  std::optional<YAML::Node> value = Lookup(key);
  if (!value) return std::nullopt;
  if (!value->IsMap()) Fail(key, "expected a mapping, got " + Render(*value));
  return YamlSection(*value, file_, FieldPath(key));
}

std::vector<std::string> YamlSection::Keys() const {
  std::vector<std::string> keys;
  if (!node_.IsMap()) return keys;
  for (const auto& entry : node_) {
    if (!entry.first.IsScalar()) FailNonScalarKey(*file_, entry.first, path_);
    keys.push_back(entry.first.Scalar());
  }
  return keys;
}

void YamlSection::RejectUnknownKeys(std::initializer_list<std::string_view> known) const {
  RejectUnknownKeys(std::vector<std::string_view>(known));
}

void YamlSection::RejectUnknownKeys(const std::vector<std::string_view>& known) const {
  if (!node_.IsMap()) return;
  for (const auto& entry : node_) {
    if (!entry.first.IsScalar()) FailNonScalarKey(*file_, entry.first, path_);
    const std::string key = entry.first.Scalar();
    bool found = false;
    for (std::string_view k : known)
      found = found || k == key;
    if (found) continue;
    std::string accepted;
    for (std::string_view k : known)
      accepted += (accepted.empty() ? "" : ", ") + std::string(k);
    throw InputError(*file_, entry.first.Mark().line + 1, FieldPath(key),
                     "unknown key" + DidYouMean(key, known) + " (accepted: " + accepted + ")");
  }
}

YamlSection LoadYamlFile(const std::string& path) {
  auto file = std::make_shared<const std::string>(path);
  // A folder opens as a stream on Linux and fails only at the first read, inside yaml-cpp.
  std::error_code ignored;
  if (std::filesystem::is_directory(path, ignored)) {
    throw InputError(path, 0, "", "is a folder, not a file");
  }
  std::ifstream in(path);
  if (!in) throw InputError(path, 0, "", "cannot open file");
  YAML::Node root;
  try {
    root = YAML::Load(in);
  } catch (const YAML::ParserException& e) {
    throw InputError(path, e.mark.line + 1, "", "syntax error: " + e.msg);
  } catch (const std::ios_base::failure& e) {
    throw InputError(path, 0, "", std::string("cannot read file: ") + e.what());
  }
  const std::string ext = path.size() >= 5 ? path.substr(path.size() - 5) : "";
  CheckStrict(root, path, "", ext == ".json" || ext == ".JSON");
  return YamlSection(std::move(root), file, "");
}

template bool YamlSection::Get<bool>(std::string_view) const;
template int YamlSection::Get<int>(std::string_view) const;
template int64_t YamlSection::Get<int64_t>(std::string_view) const;
template double YamlSection::Get<double>(std::string_view) const;
template std::string YamlSection::Get<std::string>(std::string_view) const;
template std::optional<bool> YamlSection::Find<bool>(std::string_view) const;
template std::optional<int> YamlSection::Find<int>(std::string_view) const;
template std::optional<int64_t> YamlSection::Find<int64_t>(std::string_view) const;
template std::optional<double> YamlSection::Find<double>(std::string_view) const;
template std::optional<std::string> YamlSection::Find<std::string>(std::string_view) const;
template std::vector<int> YamlSection::GetList<int>(std::string_view) const;
template std::vector<double> YamlSection::GetList<double>(std::string_view) const;
template std::vector<std::string> YamlSection::GetList<std::string>(std::string_view) const;

}  // namespace fleetsim
