// The ids of a trace's requests: at most kMaxRequestIdBytes bytes (the width of the
// /requests table's name column, so that two ids never merge there). Uniqueness is not
// checked: a set of every id seen grew with the trace (a 4M-line trace's peak RSS went
// from 124 to 383 MiB), against the rule that memory is bounded by requests in flight.
//
//   RequestIds ids;
//   ids.Add(r.id, line, [&](const std::string& message) { lines.Fail("id", message); });
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "core/request_name.h"

namespace fleetsim {

class RequestIds {
 public:
  using Fail = std::function<void(const std::string& message)>;
  // Calls `fail` (which throws) when `id` is too long.
  void Add(std::string_view id, int line, const Fail& fail);
};

}  // namespace fleetsim
