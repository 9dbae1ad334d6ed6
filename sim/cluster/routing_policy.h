// How a gateway picks an instance (SPEC.md, "Routers"), as a cluster config states it.
// The routers themselves live in fleet/router.h; this is the configuration only.
//
//   gateways:
//     count: 4
//     policy: power_of_two        # round_robin, random, least_outstanding, least_kv,
//                                 # power_of_two, prefix_affinity
//     capacity_weighted: true     # weigh instances by their bundle throughput
//     staleness_s: 0.05           # load-view refresh period
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fleetsim {

enum class RoutingPolicy {
  kRoundRobin,
  kRandom,
  kLeastOutstanding,
  kLeastKv,
  kPowerOfTwo,
  kPrefixAffinity,
};

std::optional<RoutingPolicy> ParseRoutingPolicy(std::string_view name);
std::string_view RoutingPolicyName(RoutingPolicy policy);
// Every policy name, in enum order (for error messages and tests).
std::vector<std::string> RoutingPolicyNames();

struct RouterConfig {
  RoutingPolicy policy = RoutingPolicy::kLeastOutstanding;
  // Weigh each instance by its capacity (bundle throughput): weighted round robin and
  // random, load divided by capacity for the load-based policies, ring share by capacity.
  bool capacity_weighted = false;
  // prefix_affinity: the first this many trace prefix blocks form the request's key.
  int prefix_blocks = 4;
  // prefix_affinity: points per instance on the consistent-hash ring.
  int virtual_nodes = 64;
  // prefix_affinity: the ring's target counts as overloaded, and the least loaded
  // instance is taken instead, when its outstanding requests exceed both the least loaded
  // instance's + overload_margin and overload_ratio x the least loaded instance's.
  int overload_margin = 16;
  double overload_ratio = 1.5;
};

}  // namespace fleetsim
