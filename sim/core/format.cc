#include "core/format.h"

#include <array>
#include <charconv>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>

namespace fleetsim {
namespace {

std::string Scaled(int64_t bytes, double base, const std::array<const char*, 5>& units) {
  double value = static_cast<double>(bytes);
  std::size_t unit = 0;
  while (value >= base && unit + 1 < units.size()) {
    value /= base;
    ++unit;
  }
  return Printf(unit == 0 ? "%.0f %s" : "%.1f %s", value, units[unit]);
}

}  // namespace

std::string WithCommas(int64_t value) {
  std::string digits = std::to_string(value < 0 ? -value : value);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return value < 0 ? "-" + out : out;
}

std::string BinaryBytes(int64_t bytes) {
  return Scaled(bytes, 1024.0, {"B", "KiB", "MiB", "GiB", "TiB"});
}

std::string DecimalBytes(int64_t bytes) {
  return Scaled(bytes, 1000.0, {"B", "kB", "MB", "GB", "TB"});
}

std::string Fixed(double value, int decimals) {
  return Printf("%.*f", decimals, value);
}

std::string Significant(double value, int digits) {
  return Printf("%.*g", digits, value);
}

std::string ShortestNumber(double value) {
  std::array<char, 32> text{};
  const auto [end, error] = std::to_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc() ? std::string(text.data(), end) : Significant(value, 17);
}

std::string Hex64(uint64_t value) {
  return Printf("%016llx", static_cast<unsigned long long>(value));
}

std::string Printf(const char* format, ...) {
  va_list args;
  va_start(args, format);
  va_list again;
  va_copy(again, args);
  const int size = std::vsnprintf(nullptr, 0, format, args);
  va_end(args);
  std::string text(static_cast<std::size_t>(size > 0 ? size : 0), '\0');
  std::vsnprintf(text.data(), text.size() + 1, format, again);
  va_end(again);
  return text;
}

}  // namespace fleetsim
