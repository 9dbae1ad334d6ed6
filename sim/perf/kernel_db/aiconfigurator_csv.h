// Reading aiconfigurator's converted tables (../shared/data/README.md, section 2.4): every
// latency is milliseconds (`latency`), counts are positive integers. Shared by the kernel
// and the collective table readers.
#pragma once

#include <cstdint>
#include <string_view>

#include "core/csv_reader.h"

namespace fleetsim {

// The row's `latency` in microseconds; a located error unless positive and finite.
double AiconfiguratorLatencyUs(const CsvReader& csv);
// The row's integer `column`; a located error unless positive.
int64_t PositiveCount(const CsvReader& csv, std::string_view column);

}  // namespace fleetsim
