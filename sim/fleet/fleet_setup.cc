#include "fleet/fleet_setup.h"

#include <algorithm>
#include <cmath>
#include <queue>

#include "bundles/analytic_bundle.h"
#include "core/project_paths.h"
#include "model/model_catalog.h"
#include "perf/batch_shape.h"

namespace fleetsim {

double ReferenceCapacity(const EngineSetup& setup) {
  const int64_t budget = setup.engine.max_num_batched_tokens;
  const int64_t decodes =
      std::clamp<int64_t>(setup.engine.max_num_seqs - 1, 0, std::min<int64_t>(64, budget / 2));
  const int64_t chunk = budget - decodes;
  BatchShape shape;
  if (chunk > 0) shape.AddPrefill(chunk, 0, false);
  shape.AddDecodes(decodes, decodes * 1024);
  const double seconds = ToSeconds(setup.cost->Cost(shape).total_ns);
  return seconds > 0 ? static_cast<double>(budget) / seconds : 1.0;
}

std::vector<int32_t> FleetSetup::InstancesOfRank(int rank, int size) const {
  const std::vector<int32_t> owner = Partition(size);
  std::vector<int32_t> mine;
  for (std::size_t i = 0; i < owner.size(); ++i) {
    if (owner[i] == rank) mine.push_back(static_cast<int32_t>(i));
  }
  return mine;
}

std::vector<int32_t> FleetSetup::Partition(int size) const {
  std::vector<int32_t> order(instances.size());
  for (std::size_t i = 0; i < order.size(); ++i)
    order[i] = static_cast<int32_t>(i);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    return instances[static_cast<std::size_t>(a)].capacity >
           instances[static_cast<std::size_t>(b)].capacity;
  });
  // Largest first onto the least loaded rank (a heap: 100,000 instances stay cheap).
  using Load = std::pair<double, int32_t>;
  std::priority_queue<Load, std::vector<Load>, std::greater<Load>> ranks;
  for (int32_t r = 0; r < size; ++r)
    ranks.push({0.0, r});
  std::vector<int32_t> owner(instances.size(), 0);
  for (int32_t id : order) {
    auto [load, rank] = ranks.top();
    ranks.pop();
    owner[static_cast<std::size_t>(id)] = rank;
    ranks.push({load + instances[static_cast<std::size_t>(id)].capacity, rank});
  }
  return owner;
}

FleetSetup BuildFleetSetup(ClusterConfig cluster) {
  FleetSetup fleet;
  const ModelCatalog catalog(ModelsDir());
  for (const InstanceGroupConfig& group : cluster.groups) {
    const SettingError error = [&](std::string_view setting, const std::string& message) {
      return InputError(group.file, group.line,
                        "instance_groups." + group.name + "." + std::string(setting), message);
    };
    ModelCard card = [&] {
      try {
        return catalog.Load(group.model);
      } catch (const InputError& e) {
        throw error("model", e.what());
      }
    }();
    // `analytic`: fleetsim's own bundle for this model and GPU, built once and cached.
    const std::string bundle = group.bundle == "analytic"
                                   ? CachedAnalyticBundle(card, *group.budget.hardware)
                                   : group.bundle;
    fleet.groups.push_back(
        BuildEngineSetup(std::move(card), LoadBundle(bundle), group.engine, group.budget,
                         static_cast<int64_t>(std::llround(group.step_overhead_us * 1000)), error));
  }
  std::vector<double> capacity;
  for (const EngineSetup& setup : fleet.groups)
    capacity.push_back(ReferenceCapacity(setup));
  for (std::size_t i = 0; i < cluster.placement.size(); ++i) {
    const InstancePlacement& p = cluster.placement[i];
    fleet.instances.push_back(
        {static_cast<int32_t>(i), p.group, p, capacity[static_cast<std::size_t>(p.group)]});
  }
  fleet.cluster = std::move(cluster);
  return fleet;
}

}  // namespace fleetsim
