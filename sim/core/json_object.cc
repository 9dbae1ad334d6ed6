#include "core/json_object.h"

#include <charconv>
#include <functional>
#include <optional>
#include <system_error>

#include "core/input_error.h"

namespace fleetsim {
namespace {

// Deeper nesting than any trace has; bounds the recursion on hostile input.
constexpr int kMaxDepth = 64;

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool Hex4(std::string_view text, std::size_t at, uint32_t& out) {
  if (at + 4 > text.size()) return false;
  out = 0;
  for (std::size_t i = at; i < at + 4; ++i) {
    const int digit = HexDigit(text[i]);
    if (digit < 0) return false;
    out = out * 16 + static_cast<uint32_t>(digit);
  }
  return true;
}

void AppendUtf8(uint32_t code, std::string& out) {
  auto byte = [&](uint32_t b) { out.push_back(static_cast<char>(b)); };
  if (code < 0x80) {
    byte(code);
  } else if (code < 0x800) {
    byte(0xC0 | (code >> 6));
    byte(0x80 | (code & 0x3F));
  } else if (code < 0x10000) {
    byte(0xE0 | (code >> 12));
    byte(0x80 | ((code >> 6) & 0x3F));
    byte(0x80 | (code & 0x3F));
  } else {
    byte(0xF0 | (code >> 18));
    byte(0x80 | ((code >> 12) & 0x3F));
    byte(0x80 | ((code >> 6) & 0x3F));
    byte(0x80 | (code & 0x3F));
  }
}

// `raw` is a string the scanner validated, quotes included.
std::string Unescape(std::string_view raw) {
  std::string out;
  out.reserve(raw.size());
  for (std::size_t i = 1; i + 1 < raw.size(); ++i) {
    if (raw[i] != '\\') {
      out.push_back(raw[i]);
      continue;
    }
    const char e = raw[++i];
    if (e == 'u') {
      uint32_t code = 0;
      Hex4(raw, i + 1, code);
      i += 4;
      uint32_t low = 0;
      if (code >= 0xD800 && code < 0xDC00 && i + 6 < raw.size() && raw[i + 1] == '\\' &&
          raw[i + 2] == 'u' && Hex4(raw, i + 3, low) && low >= 0xDC00 && low < 0xE000) {
        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
        i += 6;
      }
      AppendUtf8(code, out);
      continue;
    }
    const std::size_t named = std::string_view("bfnrt").find(e);
    out.push_back(named == std::string_view::npos ? e : "\b\f\n\r\t"[named]);  // else " \ /
  }
  return out;
}

// A validating scan of JSON text that records where each value starts and ends.
class Scanner {
 public:
  explicit Scanner(std::string_view text) : text_(text) {}

  void SkipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\r' || text_[pos_] == '\n'))
      ++pos_;
  }
  bool AtEnd() const { return pos_ >= text_.size(); }
  bool Take(char c) {
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  char Peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }

  bool Value(JsonValue& out, int depth) {
    SkipSpace();
    const std::size_t start = pos_;
    bool ok = false;
    switch (Peek()) {
      case '{':
        out.kind = JsonValue::Kind::kObject;
        ok = Container('}', depth, true);
        break;
      case '[':
        out.kind = JsonValue::Kind::kArray;
        ok = Container(']', depth, false);
        break;
      case '"':
        out.kind = JsonValue::Kind::kString;
        ok = String();
        break;
      case 't':
        out.kind = JsonValue::Kind::kBool;
        ok = Literal("true");
        break;
      case 'f':
        out.kind = JsonValue::Kind::kBool;
        ok = Literal("false");
        break;
      case 'n':
        out.kind = JsonValue::Kind::kNull;
        ok = Literal("null");
        break;
      default:
        out.kind = JsonValue::Kind::kNumber;
        ok = Number();
    }
    if (!ok) return Error("a JSON value");
    out.raw = text_.substr(start, pos_ - start);
    return true;
  }

  bool String() {
    if (!Take('"')) return Error("'\"'");
    while (pos_ < text_.size()) {
      const char c = text_[pos_++];
      if (c == '"') return true;
      if (static_cast<unsigned char>(c) < 0x20) return Error("no control character in a string");
      if (c != '\\') continue;
      const char e = Peek();
      ++pos_;
      if (e == 'u') {
        uint32_t code = 0;
        if (!Hex4(text_, pos_, code)) return Error("four hex digits after \\u");
        pos_ += 4;
      } else if (std::string_view("\"\\/bfnrt").find(e) == std::string_view::npos) {
        return Error("a valid escape");
      }
    }
    return Error("the string's closing '\"'");
  }

  // Sees an object's members (the key as scanned, quotes included) or an array's elements
  // (no key); returning false stops the scan.
  using Visitor = std::function<bool(std::string_view key, const JsonValue& value)>;

  // The members of an object or the elements of an array, brackets included, each shown
  // to `visit` when there is one.
  bool Container(char close, int depth, bool object, const Visitor* visit = nullptr) {
    if (depth >= kMaxDepth) return Error("less nesting");
    ++pos_;  // the opening bracket
    SkipSpace();
    if (Take(close)) return true;
    while (true) {
      std::string_view key;
      if (object) {
        SkipSpace();
        const std::size_t key_start = pos_;
        if (!String()) return false;
        key = text_.substr(key_start, pos_ - key_start);
        SkipSpace();
        if (!Take(':')) return Error("':'");
      }
      JsonValue value;
      if (!Value(value, depth + 1)) return false;
      if (visit && !(*visit)(key, value)) return false;
      SkipSpace();
      if (Take(close)) return true;
      if (!Take(',')) return Error(object ? "',' or '}'" : "',' or ']'");
    }
  }

  const std::string& error() const { return error_; }
  bool Error(const std::string& expected) {
    if (error_.empty()) error_ = "expected " + expected + " at column " + std::to_string(pos_ + 1);
    return false;
  }

 private:
  bool Literal(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }
  bool Digits() {
    const std::size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9')
      ++pos_;
    return pos_ > start;
  }
  // -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
  bool Number() {
    Take('-');
    if (Take('0')) {
      if (Peek() >= '0' && Peek() <= '9') return false;
    } else if (!Digits()) {
      return false;
    }
    if (Take('.') && !Digits()) return false;
    if (Take('e') || Take('E')) {
      if (!Take('+')) Take('-');
      if (!Digits()) return false;
    }
    return true;
  }

  std::string_view text_;
  std::size_t pos_ = 0;
  std::string error_;
};

template <typename T>
bool WholeInteger(std::string_view raw, T& out) {
  if (raw.find_first_of(".eE") != std::string_view::npos) return false;
  const auto [end, error] = std::from_chars(raw.data(), raw.data() + raw.size(), out);
  return error == std::errc() && end == raw.data() + raw.size();
}

}  // namespace

bool JsonValue::ToInt64(int64_t& out) const {
  return kind == Kind::kNumber && WholeInteger(raw, out);
}

bool JsonValue::ToUint64(uint64_t& out) const {
  return kind == Kind::kNumber && raw.front() != '-' && WholeInteger(raw, out);
}

bool JsonValue::ToDouble(double& out) const {
  if (kind != Kind::kNumber) return false;
  const auto [end, error] = std::from_chars(raw.data(), raw.data() + raw.size(), out);
  return error == std::errc() && end == raw.data() + raw.size();
}

bool JsonValue::ToText(std::string& out) const {
  if (kind == Kind::kString) {
    out = Unescape(raw);
    return true;
  }
  if (kind != Kind::kNumber && kind != Kind::kBool) return false;
  out = std::string(raw);
  return true;
}

bool JsonValue::ToUint64List(std::vector<uint64_t>& out) const {
  if (kind != Kind::kArray) return false;
  out.clear();
  const Scanner::Visitor collect = [&](std::string_view, const JsonValue& element) {
    uint64_t value = 0;
    if (!element.ToUint64(value)) return false;
    out.push_back(value);
    return true;
  };
  return Scanner(raw).Container(']', 0, false, &collect);
}

bool JsonObject::Parse(std::string_view text, std::string& error) {
  fields_.clear();
  std::optional<std::string> twice;
  const Scanner::Visitor keep = [&](std::string_view raw_key, const JsonValue& value) {
    std::string key = Unescape(raw_key);
    if (Find(key) != nullptr) {
      twice = std::move(key);
      return false;
    }
    fields_.emplace_back(std::move(key), value);
    return true;
  };
  Scanner scan(text);
  scan.SkipSpace();
  bool ok = scan.Peek() == '{';
  if (ok) {
    ok = scan.Container('}', 0, true, &keep);
    scan.SkipSpace();
    if (ok && !scan.AtEnd()) ok = scan.Error("the end of the line after the object");
  }
  if (ok) return true;
  fields_.clear();
  error = "not a JSON object";
  if (twice) {
    error += ": the key " + QuoteInput(*twice) + " is there twice";
  } else if (!scan.error().empty()) {
    error += ": " + scan.error();
  }
  return false;
}

const JsonValue* JsonObject::Find(std::string_view key) const {
  for (const auto& [name, value] : fields_) {
    if (name == key) return &value;
  }
  return nullptr;
}

}  // namespace fleetsim
