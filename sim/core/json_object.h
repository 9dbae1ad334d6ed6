// One JSON object on one line, as the trace readers need it: the top-level fields, each
// kept as its raw text and converted only when asked. Parsing checks the whole line is
// valid JSON but builds nothing for values nobody reads (a vLLM bench line's long
// per-token arrays, say), so reading a trace costs a scan of its bytes.
//
//   JsonObject row;
//   if (!row.Parse(line, error)) ...;
//   int64_t n = 0;
//   if (const JsonValue* v = row.Find("input_length"); v && v->ToInt64(n)) ...
//
// The views point into the parsed text, which must outlive them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fleetsim {

struct JsonValue {
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject };
  Kind kind = Kind::kNull;
  std::string_view raw;  // the value's text, quotes and brackets included

  bool is_null() const { return kind == Kind::kNull; }
  // A number without fraction or exponent that fits.
  bool ToInt64(int64_t& out) const;
  bool ToUint64(uint64_t& out) const;
  // Any number.
  bool ToDouble(double& out) const;
  // A string (unescaped), or a number's or bool's text; false for null, arrays, objects.
  bool ToText(std::string& out) const;
  // An array whose elements all pass ToUint64.
  bool ToUint64List(std::vector<uint64_t>& out) const;
};

class JsonObject {
 public:
  // False, with `error` saying what and where, unless `text` is exactly one JSON object
  // (surrounding white space allowed) with no key twice.
  bool Parse(std::string_view text, std::string& error);
  // The top-level field `key`, or nullptr when the object has none.
  const JsonValue* Find(std::string_view key) const;

 private:
  std::vector<std::pair<std::string, JsonValue>> fields_;
};

}  // namespace fleetsim
