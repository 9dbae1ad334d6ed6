// How long a request's name (its trace id) may be: the width of /requests' name column.
// Trace readers refuse longer ids, so that two ids never merge in the output.
#pragma once

#include <cstddef>

namespace fleetsim {

inline constexpr std::size_t kMaxRequestIdBytes = 48;

// How long a group, pool, GPU or model name may be: the width of the output's name
// columns (/instances, /summary, /timeseries). The cluster config refuses longer ones.
inline constexpr std::size_t kMaxLabelBytes = 64;

}  // namespace fleetsim
