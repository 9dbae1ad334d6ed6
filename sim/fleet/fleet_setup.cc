#include "fleet/fleet_setup.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/input_error.h"
#include "core/project_paths.h"
#include "engine/dp_setup.h"
#include "fleet/fleet_engine.h"
#include "model/model_catalog.h"
#include "perf/batch_shape.h"

namespace fleetsim {

namespace {

BatchShape ReferenceShape(const EngineSetup& setup) {
  const int64_t budget = setup.engine.max_num_batched_tokens;
  const int64_t decodes =
      std::clamp<int64_t>(setup.engine.max_num_seqs - 1, 0, std::min<int64_t>(64, budget / 2));
  const int64_t chunk = budget - decodes;
  BatchShape shape;
  if (chunk > 0) shape.AddPrefill(chunk, 0, false);
  shape.AddUniformDecodes(decodes, 1024);
  return shape;
}

double TokensPerSecond(int64_t tokens, SimTime step) {
  const double seconds = ToSeconds(step);
  return seconds > 0 ? static_cast<double>(tokens) / seconds : 1.0;
}

}  // namespace

double ReferenceCapacity(const EngineSetup& setup) {
  return TokensPerSecond(setup.engine.max_num_batched_tokens,
                         setup.cost->Cost(ReferenceShape(setup)).total_ns);
}

double ReferenceCapacity(const EngineSetup& setup, const InstanceGroupConfig& group) {
  if (group.dp <= 1) return ReferenceCapacity(setup);
  const std::unique_ptr<DpEngine> engine =
      MakeDpEngine(setup, group.dp, *group.budget.hardware, CudagraphCaptureTokensOf(setup));
  const std::vector<std::optional<BatchShape>> shapes(static_cast<std::size_t>(group.dp),
                                                      ReferenceShape(setup));
  return TokensPerSecond(group.dp * setup.engine.max_num_batched_tokens,
                         engine->Time(shapes).total_ns);
}

std::vector<int32_t> FleetSetup::Partition(int size) const {
  // Round robin over the ranks, instance by instance, continuing from one group to the
  // next: every rank gets an equal share (to one instance) of every group and of the
  // fleet, and neighbouring ids land on different ranks. Policies break ties towards the
  // lower id, so under light load the work sits on the first instances of each group; a
  // contiguous split would put all of it on rank 0.
  std::vector<int32_t> owner(instances.size(), 0);
  const auto ranks = static_cast<std::size_t>(std::max(size, 1));
  for (std::size_t i = 0; i < instances.size(); ++i)
    owner[i] = static_cast<int32_t>(i % ranks);
  return owner;
}

namespace {

// A prefill group hands every request to a decode group of its served model, which must
// run the same model (the KV it receives is that model's); a decode group gets requests
// only from prefill groups of its model.
void CheckRoles(const ClusterConfig& cluster, const FleetSetup& fleet) {
  for (std::size_t g = 0; g < cluster.groups.size(); ++g) {
    const InstanceGroupConfig& group = cluster.groups[g];
    if (group.role == InstanceRole::kMixed) continue;
    const InstanceRole partner =
        group.role == InstanceRole::kPrefill ? InstanceRole::kDecode : InstanceRole::kPrefill;
    bool found = false;
    for (std::size_t h = 0; h < cluster.groups.size(); ++h) {
      if (cluster.groups[h].role != partner || fleet.model_of_group[h] != fleet.model_of_group[g])
        continue;
      found = true;
      if (fleet.groups[h].card.name != fleet.groups[g].card.name) {
        throw InputError(
            group.file, group.LineOf("model"), "instance_groups." + group.name + ".model",
            "runs " + QuoteInput(fleet.groups[g].card.name) + " but " +
                std::string(InstanceRoleName(partner)) + " group " +
                QuoteInput(cluster.groups[h].name) + " of the same served model runs " +
                QuoteInput(fleet.groups[h].card.name) +
                ": KV moves between them only for the same model");
      }
    }
    if (found) continue;
    const std::string& served = fleet.models[static_cast<std::size_t>(fleet.model_of_group[g])];
    throw InputError(group.file, group.LineOf("role"), "instance_groups." + group.name + ".role",
                     std::string(InstanceRoleName(group.role)) + " needs a " +
                         std::string(InstanceRoleName(partner)) + " group serving " +
                         QuoteInput(served) + ", and no group is one (a " +
                         (group.role == InstanceRole::kPrefill ? "prefill group hands every "
                                                                 "request to one"
                                                               : "decode group gets requests "
                                                                 "only from one") +
                         ")");
  }
}

// gateways.decode_scope: node -- a prefill instance's decode instance is one on its own
// node, so each prefill instance needs a decode instance of its model there, and a decode
// instance with no prefill instance of its model on its node would get nothing: both are
// refused, naming the instance and its node.
void CheckDecodeScope(const ClusterConfig& cluster, const FleetSetup& fleet) {
  if (!cluster.gateways.decode_on_same_node) return;
  const std::vector<InstancePlacement>& placed = cluster.placement;
  for (std::size_t i = 0; i < placed.size(); ++i) {
    const InstanceGroupConfig& group = cluster.groups[static_cast<std::size_t>(placed[i].group)];
    if (group.role == InstanceRole::kMixed) continue;
    const InstanceRole partner =
        group.role == InstanceRole::kPrefill ? InstanceRole::kDecode : InstanceRole::kPrefill;
    const int32_t model = fleet.model_of_group[static_cast<std::size_t>(placed[i].group)];
    bool found = false;
    for (std::size_t j = 0; j < placed.size() && !found; ++j) {
      const auto other = static_cast<std::size_t>(placed[j].group);
      found = cluster.groups[other].role == partner && fleet.model_of_group[other] == model &&
              placed[j].pool == placed[i].pool && placed[j].node == placed[i].node;
    }
    if (found) continue;
    const NodePoolConfig& pool = cluster.pools[static_cast<std::size_t>(placed[i].pool)];
    throw InputError(group.file, group.LineOf("role"), "instance_groups." + group.name + ".role",
                     "gateways.decode_scope is node, but instance " + std::to_string(i) + " (" +
                         std::string(InstanceRoleName(group.role)) + ", replica " +
                         std::to_string(placed[i].replica) + ") on node " +
                         std::to_string(placed[i].node) + " of pool '" + pool.name + "' has no " +
                         std::string(InstanceRoleName(partner)) +
                         " instance of its model on that node; give the pool placement: spread, "
                         "or change the replicas so that every node holds both");
  }
}

}  // namespace

FleetSetup BuildFleetSetup(ClusterConfig cluster, const AnalyticBundleFolder& analytic_bundle) {
  FleetSetup fleet;
  const ModelCatalog catalog(ModelsDir());
  for (const InstanceGroupConfig& group : cluster.groups) {
    const SettingError error = [&](std::string_view setting, const std::string& message) {
      return InputError(group.file, group.LineOf(setting),
                        "instance_groups." + group.name + "." + std::string(setting), message);
    };
    ModelCard card = [&] {
      try {
        return catalog.Load(group.model);
      } catch (const InputError& e) {
        // A catalog name is this line's error; a config.json's own error keeps its place.
        throw error("model", e.line() > 0 ? e.what() : e.message());
      }
    }();
    // Data parallelism with expert parallelism: MoE models only; each rank holds its
    // share of the experts, which leaves it more memory for the KV cache.
    KvBudget budget = group.budget;
    if (group.dp > 1) {
      if (auto why = DpExpertParallelViolation(card, group.dp, group.enable_expert_parallel))
        throw error("dp", *why);
      budget = DpExpertParallelKvBudget(card, group.engine.tensor_parallel_size, group.dp, budget);
    }
    // `analytic`: fleetsim's own bundle for this model, GPU and engine settings (built once
    // and cached). The settings are checked first, so that a refusal (an impossible
    // attention pin, a quantized layout vLLM would not load) names the group's line.
    if (group.bundle == "analytic") {
      const ResolvedEngineConfig engine = ResolveEngineConfig(
          card, group.engine, group.budget.hardware->UsableMemoryBytes(), error);
      ResolveKvCacheLayout(card, engine, error, &*group.budget.hardware);
    }
    const std::string bundle = group.bundle == "analytic"
                                   ? analytic_bundle(card, *group.budget.hardware, group.engine)
                                   : group.bundle;
    Bundle tables = LoadBundle(bundle, group.engine.tensor_parallel_size);
    for (const std::string& mismatch :
         BundleMismatches(tables, card.name, group.budget.hardware->name)) {
      fleet.warnings.push_back(group.file + ":" + std::to_string(group.LineOf("bundle")) +
                               ": instance_groups." + group.name + ".bundle: " + mismatch);
    }
    const std::string served =
        group.served_model_name.empty() ? card.name : group.served_model_name;
    const auto known = std::find(fleet.models.begin(), fleet.models.end(), served);
    fleet.model_of_group.push_back(static_cast<int32_t>(known - fleet.models.begin()));
    if (known == fleet.models.end()) fleet.models.push_back(served);
    fleet.groups.push_back(BuildEngineSetup(std::move(card), std::move(tables), group.engine,
                                            budget, StepOverheadNs(group.step_overhead_us), error));
    if (group.dp > 1 && fleet.groups.back().engine.num_spec > 0) {
      throw error("dp",
                  "speculative decoding (speculative_config) with data parallelism is not "
                  "simulated: give dp: 1 or drop speculative_config");
    }
  }
  // A multi-model fleet's /summary has a row per model, "model:<name>": the name must fit.
  for (std::size_t g = 0; g < cluster.groups.size() && fleet.multi_model(); ++g) {
    const InstanceGroupConfig& group = cluster.groups[g];
    const std::string& served = fleet.models[static_cast<std::size_t>(fleet.model_of_group[g])];
    if (served.size() <= cluster_settings::kMaxServedModelNameBytes) continue;
    throw InputError(group.file, group.LineOf("model"), "instance_groups." + group.name + ".model",
                     "its model card's name " + QuoteInput(served) + " is longer than " +
                         std::to_string(cluster_settings::kMaxServedModelNameBytes) +
                         " bytes, the most a /summary row of a multi-model fleet holds after "
                         "'model:': give the group a shorter served_model_name");
  }
  CheckRoles(cluster, fleet);
  CheckDecodeScope(cluster, fleet);
  std::vector<double> capacity;
  for (std::size_t g = 0; g < fleet.groups.size(); ++g)
    capacity.push_back(ReferenceCapacity(fleet.groups[g], cluster.groups[g]));
  for (std::size_t i = 0; i < cluster.placement.size(); ++i) {
    const InstancePlacement& p = cluster.placement[i];
    fleet.instances.push_back(
        {static_cast<int32_t>(i), p.group, p, capacity[static_cast<std::size_t>(p.group)]});
  }
  fleet.cluster = std::move(cluster);
  return fleet;
}

}  // namespace fleetsim
