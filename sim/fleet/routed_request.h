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

// What a request's prefill instance did, carried to its decode instance with the KV
// (docs/DISAGGREGATION.md): the decode instance's record completes it.
struct PrefillLeg {
  int32_t instance = -1;  // -1: the request comes from its gateway, not a prefill instance
  int32_t preemptions = 0;
  SimTime arrival = 0;  // at the prefill instance
  SimTime first_scheduled = kNever;
  SimTime first_token = kNever;  // the prefill's own token (vLLM's proxy drops it)
  SimTime transfer_start = 0;    // the decode instance has the request and reads the KV
  SimTime transfer_end = 0;      // the KV is in the decode instance's blocks
  int64_t transfer_bytes = 0;
  int64_t cached_tokens = 0;  // the prefill instance's prefix-cache hit
};

struct RoutedRequest {
  int64_t id = 0;  // position in the workload: the request's id in every output
  int32_t gateway = 0;
  int32_t instance = 0;
  // A request for a prefill instance: the decode instance the gateway chose for it (-1
  // for a mixed instance).
  int32_t decode_instance = -1;
  PrefillLeg prefill;            // set when a prefill instance hands the request over
  SimTime instance_arrival = 0;  // gateway arrival + gateway -> instance latency
  WorkloadRequest request;       // as read; its arrival is the gateway arrival
};

void AppendRoutedRequest(const RoutedRequest& routed, std::vector<std::byte>& buffer);
// Every request in `bytes` (concatenated buffers); throws std::runtime_error on a
// truncated buffer.
std::vector<RoutedRequest> ParseRoutedRequests(std::span<const std::byte> bytes);

}  // namespace fleetsim
