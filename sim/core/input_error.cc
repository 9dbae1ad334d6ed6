#include "core/input_error.h"

#include <cstdio>

namespace fleetsim {
namespace {

// A whole error text escaped and cut: it must stay one printable line.
std::string EscapeAll(std::string_view text, std::size_t max_bytes) {
  return EscapeInput(text, max_bytes);
}

std::string Locate(const std::string& file, int line, const std::string& field,
                   const std::string& message) {
  std::string text = file;
  if (line > 0) text += ":" + std::to_string(line);
  if (!field.empty()) text += (text.empty() ? "" : ": ") + field;
  return EscapeAll(text + (text.empty() ? "" : ": ") + message, kMaxErrorText);
}

}  // namespace

InputError::InputError(std::string file, int line, std::string field, const std::string& message)
    : std::runtime_error(Locate(file, line, field, message)),
      file_(std::move(file)),
      line_(line),
      field_(std::move(field)),
      message_(message) {}

std::string EscapeInput(std::string_view text, std::size_t max_bytes) {
  std::string out;
  std::size_t i = 0;
  for (; i < text.size() && out.size() < max_bytes; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\r') {
      out += "\\r";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    } else {
      out += static_cast<char>(c);  // UTF-8 passes through
    }
  }
  if (i < text.size()) out += "... (" + std::to_string(text.size()) + " bytes)";
  return out;
}

SimTime OptionSimTime(const std::string& option, double seconds) {
  if (auto violation = SimSecondsViolation(seconds)) throw OptionError(option, *violation);
  return SecondsToSimTime(seconds);
}

std::string QuoteInput(std::string_view text) {
  return "'" + EscapeInput(text) + "'";
}

std::string QuotePath(std::string_view path) {
  return "'" + EscapeInput(path, kMaxQuotedPath) + "'";
}

InputError OptionError(const std::string& option, const std::string& message) {
  return InputError("command line", 0, option, message);
}

}  // namespace fleetsim
