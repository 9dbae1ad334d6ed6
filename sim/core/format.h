// Numbers as text, in one place: for reports (153944064 -> "153,944,064", "146.8 MiB"),
// for bundle tables ("12.3456") and for names built from values ("0.05", "1e-06").
#pragma once

#include <cstdint>
#include <string>

namespace fleetsim {

std::string WithCommas(int64_t value);
// Binary units (KiB, MiB, GiB), one decimal: "60.0 GiB".
std::string BinaryBytes(int64_t bytes);
// Decimal units (kB, MB, GB), one decimal: "153.9 MB".
std::string DecimalBytes(int64_t bytes);

// `decimals` digits after the point, as printf's %.*f: Fixed(2.0 / 3, 4) -> "0.6667".
std::string Fixed(double value, int decimals);
// `digits` significant digits, as printf's %.*g: Significant(57.0123, 4) -> "57.01".
std::string Significant(double value, int digits = 6);
// The shortest text that reads back as the same double: 0.05 -> "0.05", 1e-3 -> "0.001".
std::string ShortestNumber(double value);
// 16 lower-case hex digits: Hex64(255) -> "00000000000000ff".
std::string Hex64(uint64_t value);
// printf into a string of any length.
std::string Printf(const char* format, ...) __attribute__((format(printf, 1, 2)));

}  // namespace fleetsim
