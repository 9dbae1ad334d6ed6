#include "workload/request_ids.h"

#include "core/input_error.h"

namespace fleetsim {

void RequestIds::Add(std::string_view id, int line, const Fail& fail) {
  if (id.size() > kMaxRequestIdBytes) {
    fail("is " + std::to_string(id.size()) + " bytes long, more than the " +
         std::to_string(kMaxRequestIdBytes) + " an id may have: " + QuoteInput(id));
  }
  const auto [at, added] = line_of_.emplace(std::hash<std::string_view>{}(id), line);
  if (!added) {
    fail("duplicate request id " + QuoteInput(id) + " (first used on line " +
         std::to_string(at->second) + ")");
  }
}

}  // namespace fleetsim
