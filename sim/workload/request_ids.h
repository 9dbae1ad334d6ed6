// The ids of a trace's requests: at most kMaxRequestIdBytes bytes (the width of the
// /requests table's name column, so that two ids never merge there), and unique in the
// trace. A trace is streamed, so uniqueness is checked against a set of 64-bit hashes of
// the ids seen: 8 bytes of key and 4 of line per request plus the hash table's overhead
// (about 40 bytes per request), the one part of reading a trace that grows with the
// trace rather than with the requests in flight. Generators make unique ids by
// construction and skip it.
//
//   RequestIds ids;
//   ids.Add(r.id, line, [&](const std::string& message) { lines.Fail("id", message); });
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "core/request_name.h"

namespace fleetsim {

class RequestIds {
 public:
  using Fail = std::function<void(const std::string& message)>;
  // Calls `fail` (which throws) when `id` is too long or was seen before.
  void Add(std::string_view id, int line, const Fail& fail);

 private:
  std::unordered_map<uint64_t, int> line_of_;  // id hash -> the line that used it first
};

}  // namespace fleetsim
