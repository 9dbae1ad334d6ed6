#include "fleet/gateway_shard.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "fleet/workload_reader.h"

namespace fleetsim {

RoutingTable RoutingTableOf(const FleetSetup& fleet) {
  RoutingTable table;
  table.models = fleet.models;
  for (const FleetInstanceInfo& info : fleet.instances) {
    const auto group = static_cast<std::size_t>(info.group);
    const EngineSetup& setup = fleet.groups[group];
    table.targets.push_back({info.id, info.capacity,
                             setup.num_blocks * fleet.cluster.groups[group].dp,
                             static_cast<int32_t>(setup.layout.block_size)});
    table.model_of_target.push_back(fleet.model_of_group[group]);
    table.role_of_target.push_back(fleet.cluster.groups[group].role);
    table.node_of_target.push_back(std::to_string(info.placement.pool) + ":" +
                                   std::to_string(info.placement.node));
  }
  return table;
}

GatewayShard::GatewayShard(const GatewaysConfig& config, const RoutingTable& table, uint64_t seed,
                           int rank, int size)
    : uses_load_(UsesLoad(config.router.policy)),
      prefix_blocks_(config.router.prefix_blocks),
      model_of_target_(table.model_of_target),
      role_of_target_(table.role_of_target) {
  if (model_of_target_.size() != table.targets.size())
    throw std::invalid_argument("GatewayShard: one model per target");
  if (role_of_target_.empty()) role_of_target_.assign(table.targets.size(), InstanceRole::kMixed);
  if (role_of_target_.size() != table.targets.size())
    throw std::invalid_argument("GatewayShard: one role per target");
  for (std::size_t i = 0; i < table.targets.size(); ++i) {
    if (table.targets[i].instance != static_cast<int32_t>(i))
      throw std::invalid_argument("GatewayShard: targets must be instances 0..n-1 in order");
  }
  // Each model's instances that gateways route to (all but decode instances); a model
  // served by every one of them shares the fleet's router. Decode instances have routers
  // of their own: one per model, or per model and node when the decode instance must be on
  // the prefill instance's node (decode_scope: node).
  const bool by_node = config.decode_on_same_node;
  if (by_node && table.node_of_target.size() != table.targets.size())
    throw std::invalid_argument("GatewayShard: decode_scope node needs every target's node");
  auto decode_key = [&](std::size_t target) {
    const std::string& model = table.models.at(static_cast<std::size_t>(model_of_target_[target]));
    return by_node ? model + "@" + table.node_of_target[target] : model;
  };
  std::vector<RouteTarget> front;
  std::vector<std::vector<RouteTarget>> subsets(table.models.size());
  std::vector<std::string> decode_keys;  // in the order of their first decode instance
  std::vector<std::vector<RouteTarget>> decode_subsets;
  for (std::size_t i = 0; i < table.targets.size(); ++i) {
    const auto model = static_cast<std::size_t>(model_of_target_[i]);
    if (role_of_target_[i] == InstanceRole::kDecode) {
      const std::string key = decode_key(i);
      auto k = static_cast<std::size_t>(std::find(decode_keys.begin(), decode_keys.end(), key) -
                                        decode_keys.begin());
      if (k == decode_keys.size()) {
        decode_keys.push_back(key);
        decode_subsets.emplace_back();
      }
      decode_subsets[k].push_back(table.targets[i]);
      continue;
    }
    front.push_back(table.targets[i]);
    subsets.at(model).push_back(table.targets[i]);
  }
  int32_t routers = 1;
  for (std::size_t m = 0; m < table.models.size(); ++m) {
    model_index_.emplace(table.models[m], static_cast<int32_t>(m));
    const bool everyone = subsets[m].size() == front.size();
    router_of_model_.push_back(everyone || subsets[m].empty() ? 0 : routers++);
  }
  decode_router_of_target_.assign(table.targets.size(), -1);
  for (std::size_t i = 0; i < table.targets.size(); ++i) {
    if (role_of_target_[i] != InstanceRole::kPrefill) continue;
    const auto found = std::find(decode_keys.begin(), decode_keys.end(), decode_key(i));
    if (found != decode_keys.end())
      decode_router_of_target_[i] = static_cast<int32_t>(found - decode_keys.begin());
  }
  RouterConfig decode_config = config.router;
  decode_config.policy = config.decode_policy;
  if (!decode_keys.empty() && UsesLoad(config.decode_policy)) uses_load_ = true;
  index_of_.assign(static_cast<std::size_t>(config.count), -1);
  for (int32_t g = 0; g < config.count; ++g) {
    if (RankOfGateway(g, size) != rank) continue;
    index_of_[static_cast<std::size_t>(g)] = static_cast<int32_t>(gateways_.size());
    Gateway gateway{g, {}, {}};
    gateway.routers.emplace_back(config.router, front, StreamSeedOfGateway(seed, g));
    for (std::size_t m = 0; m < table.models.size(); ++m) {
      if (router_of_model_[m] != 0)
        gateway.routers.emplace_back(config.router, subsets[m],
                                     StreamSeedOfGateway(seed, g, table.models[m]));
    }
    for (std::size_t k = 0; k < decode_keys.size(); ++k)
      gateway.decode_routers.emplace_back(decode_config, decode_subsets[k],
                                          StreamSeedOfGateway(seed, g, "decode:" + decode_keys[k]));
    gateways_.push_back(std::move(gateway));
  }
}

void GatewayShard::Apply(std::span<const LoadChange> changes) {
  for (Gateway& gateway : gateways_) {
    for (Router& router : gateway.routers)
      router.Apply(changes);
    for (Router& router : gateway.decode_routers)
      router.Apply(changes);
  }
}

GatewayShard::Gateway& GatewayShard::GatewayOf(const RoutedRequest& routed) {
  const int32_t index =
      routed.gateway >= 0 && static_cast<std::size_t>(routed.gateway) < index_of_.size()
          ? index_of_[static_cast<std::size_t>(routed.gateway)]
          : -1;
  if (index < 0)
    throw std::logic_error("gateway " + std::to_string(routed.gateway) + " is not on this rank");
  return gateways_[static_cast<std::size_t>(index)];
}

RouteRequest GatewayShard::QueryOf(const RoutedRequest& routed) const {
  RouteRequest query;
  query.prompt_tokens = routed.request.input_tokens;
  query.prefix_key = PrefixKey(routed.request.block_hashes, prefix_blocks_);
  return query;
}

int32_t GatewayShard::RouteDecode(const RoutedRequest& routed, int32_t instance) {
  const auto target = static_cast<std::size_t>(instance);
  if (instance < 0 || role_of_target_.at(target) != InstanceRole::kPrefill) return kNoInstance;
  const int32_t chooser = decode_router_of_target_.at(target);
  if (chooser < 0)
    throw std::logic_error("prefill instance " + std::to_string(instance) +
                           " has no decode instance in its scope");
  return GatewayOf(routed).decode_routers[static_cast<std::size_t>(chooser)].Route(QueryOf(routed));
}

int32_t GatewayShard::Route(const RoutedRequest& routed) {
  Gateway& gateway = GatewayOf(routed);
  int32_t chooser = 0;
  if (!routed.request.model.empty()) {
    const auto model = model_index_.find(routed.request.model);
    if (model == model_index_.end()) return kNoInstance;
    chooser = router_of_model_[static_cast<std::size_t>(model->second)];
  }
  const RouteRequest query = QueryOf(routed);
  std::vector<Router>& routers = gateway.routers;
  const int32_t instance = routers[static_cast<std::size_t>(chooser)].Route(query);
  if (routers.size() > 1) {
    // One view per gateway: the fleet's router and the instance's model's router both
    // count the assignment, whichever made it.
    const int32_t own = router_of_model_[static_cast<std::size_t>(
        model_of_target_[static_cast<std::size_t>(instance)])];
    for (const int32_t k : {int32_t{0}, own}) {
      if (k != chooser) routers[static_cast<std::size_t>(k)].Observe(instance, query);
    }
  }
  return instance;
}

std::vector<int32_t> GatewayShard::ids() const {
  std::vector<int32_t> ids;
  for (const Gateway& gateway : gateways_)
    ids.push_back(gateway.id);
  return ids;
}

bool GatewayShard::Holds(int32_t id) const {
  return id >= 0 && static_cast<std::size_t>(id) < index_of_.size() &&
         index_of_[static_cast<std::size_t>(id)] >= 0;
}

void GatewayShard::SaveGateway(int32_t id, CheckpointWriter& w) const {
  // A field added to Gateway is state: save it below and in LoadGateway, then update this.
  static_assert(sizeof(Gateway) == 56, "GatewayShard::Gateway changed: save the new field");
  const Gateway& gateway =
      gateways_.at(static_cast<std::size_t>(index_of_.at(static_cast<std::size_t>(id))));
  w.U64(gateway.routers.size());
  for (const Router& router : gateway.routers)
    router.Save(w);
  // Prefill/decode fleets: each model's decode router (its view and its own stream).
  w.U64(gateway.decode_routers.size());
  for (const Router& router : gateway.decode_routers)
    router.Save(w);
}

void GatewayShard::LoadGateway(int32_t id, CheckpointReader& r) {
  Gateway& gateway =
      gateways_.at(static_cast<std::size_t>(index_of_.at(static_cast<std::size_t>(id))));
  r.Require(r.U64() == gateway.routers.size(), "gateway's router count");
  for (Router& router : gateway.routers)
    router.Load(r);
  r.Require(r.U64() == gateway.decode_routers.size(), "gateway's decode router count");
  for (Router& router : gateway.decode_routers)
    router.Load(r);
}

}  // namespace fleetsim
