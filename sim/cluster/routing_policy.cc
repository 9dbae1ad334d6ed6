#include "cluster/routing_policy.h"

#include <array>
#include <utility>

namespace fleetsim {
namespace {

// The config names, in enum order.
constexpr std::array<std::pair<RoutingPolicy, std::string_view>, 6> kPolicyNames{{
    {RoutingPolicy::kRoundRobin, "round_robin"},
    {RoutingPolicy::kRandom, "random"},
    {RoutingPolicy::kLeastOutstanding, "least_outstanding"},
    {RoutingPolicy::kLeastKv, "least_kv"},
    {RoutingPolicy::kPowerOfTwo, "power_of_two"},
    {RoutingPolicy::kPrefixAffinity, "prefix_affinity"},
}};

}  // namespace

std::optional<RoutingPolicy> ParseRoutingPolicy(std::string_view name) {
  for (const auto& [policy, policy_name] : kPolicyNames) {
    if (policy_name == name) return policy;
  }
  return std::nullopt;
}

std::string_view RoutingPolicyName(RoutingPolicy policy) {
  for (const auto& [p, name] : kPolicyNames) {
    if (p == policy) return name;
  }
  return "unknown";
}

std::vector<std::string> RoutingPolicyNames() {
  std::vector<std::string> names;
  names.reserve(kPolicyNames.size());
  for (const auto& entry : kPolicyNames)
    names.emplace_back(entry.second);
  return names;
}

}  // namespace fleetsim
