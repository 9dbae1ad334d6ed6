#include "core/format.h"

#include <array>
#include <cstdio>

namespace fleetsim {
namespace {

std::string Scaled(int64_t bytes, double base, const std::array<const char*, 5>& units) {
  double value = static_cast<double>(bytes);
  std::size_t unit = 0;
  while (value >= base && unit + 1 < units.size()) {
    value /= base;
    ++unit;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, unit == 0 ? "%.0f %s" : "%.1f %s", value, units[unit]);
  return buf;
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

}  // namespace fleetsim
