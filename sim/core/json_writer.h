// A small streaming JSON writer with stable key order, for machine-readable output
// (`--json`, the report's data, trace files). Keys come out in the order they are
// written, so output is reproducible. kCompact leaves out the newlines and indentation
// (for files a program reads: a trace of millions of events).
//
//   JsonWriter json(std::cout);
//   json.BeginObject();
//   json.Field("block_size", 784);
//   json.Key("groups"); json.BeginArray(); ... json.EndArray();
//   json.EndObject();
#pragma once

#include <cstdint>
#include <ostream>
#include <string_view>
#include <type_traits>
#include <vector>

namespace fleetsim {

class JsonWriter {
 public:
  enum class Layout { kIndented, kCompact };
  explicit JsonWriter(std::ostream& out, Layout layout = Layout::kIndented)
      : out_(out), compact_(layout == Layout::kCompact) {}
  ~JsonWriter();

  void BeginObject();
  void EndObject();
  void BeginArray();
  void EndArray();
  void Key(std::string_view key);

  void Value(std::string_view text);
  void Value(const char* text) { Value(std::string_view(text)); }
  void Value(bool flag);
  void Value(double number);  // 17 significant digits: the double exactly; NaN, inf: null
  // `digits` significant digits (a chart's data need not carry 17).
  void Value(double number, int digits);
  void Null();
  template <typename Int>
  requires(std::is_integral_v<Int> && !std::is_same_v<Int, bool>) void Value(Int number) {
    BeforeValue();
    out_ << number;
  }

  template <typename T>
  void Field(std::string_view key, const T& value) {
    Key(key);
    Value(value);
  }

 private:
  void BeforeValue();
  void Indent();
  void Close(char bracket);
  void WriteString(std::string_view text);

  std::ostream& out_;
  bool compact_;
  std::vector<bool> first_in_scope_;  // one entry per open object/array
  bool after_key_ = false;
};

}  // namespace fleetsim
