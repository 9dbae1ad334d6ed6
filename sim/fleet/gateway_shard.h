// The gateways one rank holds (gateway g lives on rank g mod R): each with its own routers
// and random streams, a load view refreshed from the loads that changed since the last
// fleet-wide snapshot, and the routing of the requests that arrive at it.
//
// A request that names a model goes only to the instance groups serving it (several
// groups may, on different GPUs): each gateway has a router over every instance, used for
// requests that name none, and one per served model whose groups are not the whole fleet,
// each running the gateway's policy over that subset. The gateway keeps one view: what any
// of its routers sends an instance is counted by each router that sees that instance. A
// request for a model no group serves is not routed (Route says kNoInstance).
//
//   GatewayShard gateways(fleet.cluster.gateways, RoutingTableOf(fleet), seed, rank, size);
//   if (gateways.uses_load()) gateways.Apply(changes);      // at an epoch's start
//   int32_t instance = gateways.Route(request);             // its gateway lives here
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "fleet/fleet_setup.h"
#include "fleet/routed_request.h"
#include "fleet/router.h"

namespace fleetsim {

// What the gateways route over.
struct RoutingTable {
  std::vector<RouteTarget> targets;      // every instance, by id, as routers see it
  std::vector<int32_t> model_of_target;  // the model each serves: an index into `models`
  std::vector<std::string> models;       // served model names
  // Each target's role (docs/DISAGGREGATION.md): gateways route to mixed and prefill
  // instances; a decode instance is chosen for a request routed to a prefill instance.
  std::vector<InstanceRole> role_of_target;
  // Each target's node ("pool:node"), read only under gateways.decode_scope: node, where a
  // prefill instance's decode instance is picked among those on its node. Empty: unknown.
  std::vector<std::string> node_of_target;
};
RoutingTable RoutingTableOf(const FleetSetup& fleet);

class GatewayShard {
 public:
  static constexpr int32_t kNoInstance = -1;

  GatewayShard(const GatewaysConfig& config, const RoutingTable& table, uint64_t seed, int rank,
               int size);

  // Whether the routing policy reads load: only then are snapshots taken.
  bool uses_load() const { return uses_load_; }
  // Gateways on this rank.
  std::size_t size() const { return gateways_.size(); }

  // Every gateway's view becomes the last snapshot updated by `changes` (the instances
  // whose load changed since it, in any order); the assignments since are forgotten.
  void Apply(std::span<const LoadChange> changes);
  // The instance the request's gateway (which must live on this rank) sends it to, or
  // kNoInstance when it names a model no group serves.
  int32_t Route(const RoutedRequest& request);
  // For a request just routed to `instance`: the decode instance of its model (on its node,
  // under decode_scope: node) chosen by the gateway's decode router (gateways.decode_policy,
  // its own stream), or kNoInstance when `instance` is not a prefill instance. The gateway picks
  // both at arrival, as vLLM's disaggregated-serving proxy and llm-d's P/D scheduler do.
  int32_t RouteDecode(const RoutedRequest& request, int32_t instance);

  // Checkpoints (docs/CHECKPOINT.md), by gateway id: the ids held here, and gateway `id`'s
  // routers saved or loaded (Load only for a gateway held here, into routers built alike).
  std::vector<int32_t> ids() const;
  bool Holds(int32_t id) const;
  void SaveGateway(int32_t id, CheckpointWriter& w) const;
  void LoadGateway(int32_t id, CheckpointReader& r);

 private:
  struct Gateway {
    int32_t id = 0;
    std::vector<Router> routers;  // [0]: every instance; then per model, as router_of_model_
    // Per model with decode groups (per model and node under decode_scope: node), as
    // decode_router_of_target_ indexes them.
    std::vector<Router> decode_routers;
  };
  RouteRequest QueryOf(const RoutedRequest& routed) const;
  Gateway& GatewayOf(const RoutedRequest& routed);
  bool uses_load_;
  int prefix_blocks_;
  std::vector<int32_t> model_of_target_;
  std::unordered_map<std::string, int32_t> model_index_;  // served name -> model
  std::vector<int32_t> router_of_model_;  // 0 when the model's groups are every instance
  std::vector<InstanceRole> role_of_target_;
  std::vector<int32_t> decode_router_of_target_;  // -1: not a prefill instance
  std::vector<Gateway> gateways_;
  std::vector<int32_t> index_of_;  // by gateway id; -1 when another rank holds it
};

}  // namespace fleetsim
