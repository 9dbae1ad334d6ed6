#include "fleet/gateway_shard.h"

#include <stdexcept>
#include <string>

#include "fleet/workload_reader.h"

namespace fleetsim {

std::vector<RouteTarget> RouteTargetsOf(const FleetSetup& fleet) {
  std::vector<RouteTarget> targets;
  for (const FleetInstanceInfo& info : fleet.instances) {
    const EngineSetup& setup = fleet.groups[static_cast<std::size_t>(info.group)];
    targets.push_back(
        {info.id, info.capacity, setup.num_blocks, static_cast<int32_t>(setup.layout.block_size)});
  }
  return targets;
}

GatewayShard::GatewayShard(const GatewaysConfig& config, const std::vector<RouteTarget>& targets,
                           uint64_t seed, int rank, int size)
    : uses_load_(UsesLoad(config.router.policy)), prefix_blocks_(config.router.prefix_blocks) {
  index_of_.assign(static_cast<std::size_t>(config.count), -1);
  for (int32_t g = 0; g < config.count; ++g) {
    if (RankOfGateway(g, size) != rank) continue;
    index_of_[static_cast<std::size_t>(g)] = static_cast<int32_t>(gateways_.size());
    gateways_.push_back({g, Router(config.router, targets, StreamSeedOfGateway(seed, g))});
  }
}

void GatewayShard::Refresh(std::span<const InstanceLoad> snapshot) {
  for (Gateway& gateway : gateways_)
    gateway.router.Refresh(snapshot);
}

int32_t GatewayShard::Route(const RoutedRequest& routed) {
  const int32_t index =
      routed.gateway >= 0 && static_cast<std::size_t>(routed.gateway) < index_of_.size()
          ? index_of_[static_cast<std::size_t>(routed.gateway)]
          : -1;
  if (index < 0)
    throw std::logic_error("gateway " + std::to_string(routed.gateway) + " is not on this rank");
  RouteRequest query;
  query.prompt_tokens = routed.request.input_tokens;
  query.prefix_key = PrefixKey(routed.request.block_hashes, prefix_blocks_);
  return gateways_[static_cast<std::size_t>(index)].router.Route(query);
}

}  // namespace fleetsim
