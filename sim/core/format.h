// Human-readable numbers for reports: 153944064 -> "153,944,064", "146.8 MiB".
#pragma once

#include <cstdint>
#include <string>

namespace fleetsim {

std::string WithCommas(int64_t value);
// Binary units (KiB, MiB, GiB), one decimal: "60.0 GiB".
std::string BinaryBytes(int64_t bytes);
// Decimal units (kB, MB, GB), one decimal: "153.9 MB".
std::string DecimalBytes(int64_t bytes);

}  // namespace fleetsim
