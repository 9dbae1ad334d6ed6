#include "workload/request_ids.h"

#include "core/input_error.h"

namespace fleetsim {

void RequestIds::Add(std::string_view id, int /*line*/, const Fail& fail) {
  if (id.size() > kMaxRequestIdBytes) {
    fail("is " + std::to_string(id.size()) + " bytes long, more than the " +
         std::to_string(kMaxRequestIdBytes) + " an id may have: " + QuoteInput(id));
  }
}

}  // namespace fleetsim
