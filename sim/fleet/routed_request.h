// A request on its way from a gateway to an instance, and its wire form: routed requests
// travel between MPI ranks in one batched byte buffer per destination rank per window.
//
//   std::vector<std::byte> buffer;
//   AppendRoutedRequest(request, buffer);
//   for (RoutedRequest& r : ParseRoutedRequests(received)) ...
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/sim_time.h"
#include "workload/workload_source.h"

namespace fleetsim {

struct RoutedRequest {
  int64_t id = 0;  // position in the workload: the request's id in every output
  int32_t gateway = 0;
  int32_t instance = 0;
  SimTime instance_arrival = 0;  // gateway arrival + gateway -> instance latency
  WorkloadRequest request;       // as read; its arrival is the gateway arrival
};

void AppendRoutedRequest(const RoutedRequest& routed, std::vector<std::byte>& buffer);
// Every request in `bytes` (concatenated buffers); throws std::runtime_error on a
// truncated buffer.
std::vector<RoutedRequest> ParseRoutedRequests(std::span<const std::byte> bytes);

}  // namespace fleetsim
