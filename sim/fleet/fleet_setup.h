// What a fleet run is built from: each instance group's engine (model card, bundle, cost
// model -- built once and shared by the group's replicas), every instance's static facts
// (group, placement, capacity), and the partition of the instances over MPI ranks.
//
//   FleetSetup fleet = BuildFleetSetup(LoadClusterConfig(path), CachedAnalyticBundle);
//   std::vector<int32_t> owner = fleet.Partition(size);   // rank of each instance
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "cluster/cluster_config.h"
#include "engine/engine_setup.h"
#include "model/hardware.h"
#include "model/model_card.h"

namespace fleetsim {

struct FleetInstanceInfo {
  int32_t id = 0;
  int32_t group = 0;
  InstancePlacement placement;
  double capacity = 0;  // tokens/s of a saturated reference step
};

struct FleetSetup {
  ClusterConfig cluster;
  std::vector<EngineSetup> groups;           // by group index
  std::vector<FleetInstanceInfo> instances;  // by instance id
  // The served model names, each once, in the order of the first group serving it; and
  // each group's, as an index into them. A request naming a model routes only to groups
  // serving it.
  std::vector<std::string> models;
  std::vector<int32_t> model_of_group;
  // Groups whose bundle says it is for another model or GPU (allowed, but worth saying).
  std::vector<std::string> warnings;

  // The rank of every instance, by instance id: instance i on rank i mod size, so each
  // rank has an equal share (to one instance) of every group and the low ids that
  // policies' ties favour are spread over the ranks. The partition never changes
  // results, only speed.
  std::vector<int32_t> Partition(int size) const;
  // Whether the fleet serves more than one model (then /summary has a row per model).
  bool multi_model() const { return models.size() > 1; }
};

// Throughput of a saturated step of this engine, tokens per second: one prefill chunk
// filling the token budget beside a decode batch (up to 64 sequences at 1,024 tokens of
// context). A router weight, not a prediction of served throughput.
double ReferenceCapacity(const EngineSetup& setup);
// An instance of `group`: with dp > 1, every DP rank running that step in one lock-step
// (engine/dp_engine.h), dp x the tokens over its time.
double ReferenceCapacity(const EngineSetup& setup, const InstanceGroupConfig& group);

// The folder of the `analytic` bundle for a model on a GPU with a group's engine settings
// (they decide its attention kernels and weights). The app passes CachedAnalyticBundle
// (bundles/analytic_bundle.h), which builds it on first use: the fleet reads bundles, it
// does not build them (docs/DESIGN.md).
using AnalyticBundleFolder = std::function<std::string(
    const ModelCard& card, const HardwareSpec& hardware, const EngineConfig& engine)>;

// Builds each group's engine; a group with `bundle: analytic` reads the folder that
// `analytic_bundle` gives. Errors name the group's line in the cluster config.
FleetSetup BuildFleetSetup(ClusterConfig cluster, const AnalyticBundleFolder& analytic_bundle);

}  // namespace fleetsim
