// The gateways one rank holds (gateway g lives on rank g mod R): each with its own router
// and random stream (StreamSeedOfGateway), a load view refreshed from the fleet-wide
// snapshot, and the routing of the requests that arrive at it.
//
//   GatewayShard gateways(fleet.cluster.gateways, RouteTargetsOf(fleet), seed, rank, size);
//   if (gateways.uses_load()) gateways.Refresh(snapshot);   // at an epoch's start
//   int32_t instance = gateways.Route(request);             // its gateway lives here
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "fleet/fleet_setup.h"
#include "fleet/routed_request.h"
#include "fleet/router.h"

namespace fleetsim {

// Every instance as a router sees it: id, capacity, KV blocks and block size.
std::vector<RouteTarget> RouteTargetsOf(const FleetSetup& fleet);

class GatewayShard {
 public:
  // `targets`: every instance of the fleet, as routers see it.
  GatewayShard(const GatewaysConfig& config, const std::vector<RouteTarget>& targets, uint64_t seed,
               int rank, int size);

  // Whether the routing policy reads load: only then are snapshots taken.
  bool uses_load() const { return uses_load_; }
  // Gateways on this rank.
  std::size_t size() const { return gateways_.size(); }

  // Every gateway's view becomes `snapshot` (indexed by instance id).
  void Refresh(std::span<const InstanceLoad> snapshot);
  // The instance the request's gateway (which must live on this rank) sends it to.
  int32_t Route(const RoutedRequest& request);

 private:
  struct Gateway {
    int32_t id = 0;
    Router router;
  };
  bool uses_load_;
  int prefix_blocks_;
  std::vector<Gateway> gateways_;
  std::vector<int32_t> index_of_;  // by gateway id; -1 when another rank holds it
};

}  // namespace fleetsim
