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

#include "cluster/cluster_settings.h"

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
// Whether a router of this policy reads the load view: the fleet takes load snapshots
// only for those (round_robin and random never look).
bool UsesLoad(RoutingPolicy policy);

struct RouterConfig {
  RoutingPolicy policy = *ParseRoutingPolicy(cluster_settings::kGatewayPolicy.Default());
  // Weigh each instance by its capacity (bundle throughput): weighted round robin and
  // random, load divided by capacity for the load-based policies, ring share by capacity.
  bool capacity_weighted = cluster_settings::kCapacityWeighted.Default();
  // prefix_affinity: the first this many trace prefix blocks form the request's key.
  int prefix_blocks = cluster_settings::kPrefixBlocks.Default();
  // prefix_affinity: points per instance on the consistent-hash ring.
  int virtual_nodes = cluster_settings::kVirtualNodes.Default();
  // prefix_affinity: the ring's target counts as overloaded, and the least loaded
  // instance is taken instead, when its outstanding requests exceed both the least loaded
  // instance's + overload_margin and overload_ratio x the least loaded instance's.
  int overload_margin = cluster_settings::kOverloadMargin.Default();
  double overload_ratio = cluster_settings::kOverloadRatio.Default();
};

}  // namespace fleetsim
