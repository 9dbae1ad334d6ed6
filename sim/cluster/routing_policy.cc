#include "cluster/routing_policy.h"

#include <array>

namespace fleetsim {
namespace {

struct PolicyFacts {
  RoutingPolicy policy;
  std::string_view name;  // in cluster configs
  bool uses_load;         // reads the load view
};

// In enum order. prefix_affinity reads the load for its overload check and fallback.
constexpr std::array<PolicyFacts, 6> kPolicies{{
    {RoutingPolicy::kRoundRobin, "round_robin", false},
    {RoutingPolicy::kRandom, "random", false},
    {RoutingPolicy::kLeastOutstanding, "least_outstanding", true},
    {RoutingPolicy::kLeastKv, "least_kv", true},
    {RoutingPolicy::kPowerOfTwo, "power_of_two", true},
    {RoutingPolicy::kPrefixAffinity, "prefix_affinity", true},
}};

}  // namespace

std::optional<RoutingPolicy> ParseRoutingPolicy(std::string_view name) {
  for (const PolicyFacts& p : kPolicies) {
    if (p.name == name) return p.policy;
  }
  return std::nullopt;
}

std::string_view RoutingPolicyName(RoutingPolicy policy) {
  for (const PolicyFacts& p : kPolicies) {
    if (p.policy == policy) return p.name;
  }
  return "unknown";
}

bool UsesLoad(RoutingPolicy policy) {
  for (const PolicyFacts& p : kPolicies) {
    if (p.policy == policy) return p.uses_load;
  }
  return true;
}

std::vector<std::string> RoutingPolicyNames() {
  std::vector<std::string> names;
  names.reserve(kPolicies.size());
  for (const PolicyFacts& p : kPolicies)
    names.emplace_back(p.name);
  return names;
}

}  // namespace fleetsim
