#include "core/json_writer.h"

#include <cmath>

#include "core/format.h"

namespace fleetsim {

JsonWriter::~JsonWriter() {
  if (first_in_scope_.empty() && !compact_) out_ << '\n';
}

void JsonWriter::Indent() {
  if (compact_) return;
  out_ << '\n';
  for (std::size_t i = 0; i < first_in_scope_.size(); ++i)
    out_ << "  ";
}

void JsonWriter::BeforeValue() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (first_in_scope_.empty()) return;
  if (!first_in_scope_.back()) out_ << ',';
  first_in_scope_.back() = false;
  Indent();
}

void JsonWriter::BeginObject() {
  BeforeValue();
  out_ << '{';
  first_in_scope_.push_back(true);
}

void JsonWriter::Close(char bracket) {
  const bool empty = first_in_scope_.back();
  first_in_scope_.pop_back();
  if (!empty) Indent();
  out_ << bracket;
}

void JsonWriter::EndObject() {
  Close('}');
}

void JsonWriter::BeginArray() {
  BeforeValue();
  out_ << '[';
  first_in_scope_.push_back(true);
}

void JsonWriter::EndArray() {
  Close(']');
}

void JsonWriter::Key(std::string_view key) {
  BeforeValue();
  WriteString(key);
  out_ << (compact_ ? ":" : ": ");
  after_key_ = true;
}

void JsonWriter::Value(std::string_view text) {
  BeforeValue();
  WriteString(text);
}

void JsonWriter::WriteString(std::string_view text) {
  out_ << '"';
  for (char c : text) {
    switch (c) {
      case '"':
        out_ << "\\\"";
        break;
      case '\\':
        out_ << "\\\\";
        break;
      case '\n':
        out_ << "\\n";
        break;
      case '\t':
        out_ << "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out_ << Printf("\\u%04x", c);
        } else {
          out_ << c;
        }
    }
  }
  out_ << '"';
}

void JsonWriter::Value(bool flag) {
  BeforeValue();
  out_ << (flag ? "true" : "false");
}

void JsonWriter::Value(double number) {
  Value(number, 17);
}

void JsonWriter::Value(double number, int digits) {
  BeforeValue();
  if (!std::isfinite(number)) {
    out_ << "null";
    return;
  }
  out_ << Significant(number, digits);
}

void JsonWriter::Null() {
  BeforeValue();
  out_ << "null";
}

}  // namespace fleetsim
