// A cluster description (cluster_configs/*.yaml, documented in docs/CLUSTER_CONFIG.md):
// node pools of one GPU type; instance groups of one model with one bundle, TP degree and
// engine settings, replicated and placed on a pool's nodes; gateways and their routing
// policy; network latencies; SLOs. Every error names the file, line and key and says what
// is accepted.
//
//   name: two_pools
//   node_pools:
//     - {name: h100, hardware: H100-SXM, nodes: 4}            # gpus_per_node from the catalog
//   instance_groups:
//     - {name: llama, model: llama-3.1-8b, pool: h100, tp: 1, replicas: 32,
//        engine: {enable_prefix_caching: true}}
//   gateways: {count: 2, policy: least_outstanding, staleness_s: 0.05}
//   latency: {gateway_to_instance_us: 500, instance_to_client_us: 500}
//   slo: {ttft_s: 2.0, tpot_s: 0.1}
//   timeseries: {interval_s: 1.0}
//
// A group may name `hardware:` instead of `pool:`; it then gets a pool of its own with
// just enough nodes. Instances are placed first fit (see InstancePlacement). Relative
// paths are relative to the config file's folder. Unknown keys anywhere are errors.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/cluster_settings.h"
#include "cluster/routing_policy.h"
#include "core/yaml_section.h"
#include "engine/engine_config.h"
#include "engine/engine_setup.h"
#include "model/hardware.h"

namespace fleetsim {

struct NodePoolConfig {
  std::string name;
  std::string hardware;  // catalog name or path, as written
  HardwareSpec spec;     // its links (NVLink for TP all-reduce) come from the catalog entry
  int nodes = 1;
  int gpus_per_node = 0;  // default: the catalog's; placement and the TP check use this
  bool spread = false;    // placement: spread (most free GPUs first) instead of first_fit
  bool implicit = false;  // made for a group that named only `hardware:` (named after it)
  int line = 0;           // of the pool's entry (of the group's, for an implicit pool)
};

// What a group's instances do with a request (docs/DISAGGREGATION.md): everything
// (mixed), only its prompt and first token before handing its KV to a decode instance
// (prefill), or the rest of it once the KV has arrived (decode).
enum class InstanceRole { kMixed, kPrefill, kDecode };
std::optional<InstanceRole> ParseInstanceRole(std::string_view name);
std::string_view InstanceRoleName(InstanceRole role);

struct InstanceGroupConfig {
  std::string name;
  InstanceRole role = InstanceRole::kMixed;
  std::string pool;  // a node pool's name (an implicit pool's is the group's name)
  std::string model;
  // The name requests ask for (served_model_name); "" until the fleet resolves it to the
  // model card's name (FleetSetup::served_models).
  std::string served_model_name;
  std::string hardware;  // the pool's hardware as catalogued (HardwareSpec::name)
  std::string bundle;    // a bundle directory, or "analytic" (built and cached)
  int replicas = cluster_settings::kGroupReplicas.Default();
  // Data parallelism with expert parallelism (vLLM's data_parallel_size and
  // enable_expert_parallel): each instance is `dp` lock-stepped engines of TP GPUs each.
  int dp = cluster_settings::kGroupDp.Default();
  bool enable_expert_parallel = cluster_settings::kGroupEnableExpertParallel.Default();
  EngineConfig engine;
  KvBudget budget;  // hardware filled by the loader: the pool's HardwareSpec
  double step_overhead_us = engine_settings::kStepOverheadUs.Default();
  // Where in the file the group is, for errors found while building it: the group's line,
  // and the lines of the keys it gives (model, served_model_name, bundle, hardware, tp, and its
  // engine settings).
  std::string file;
  int line = 0;
  std::map<std::string, int, std::less<>> key_lines;
  int LineOf(std::string_view key) const {
    const auto it = key_lines.find(key);
    return it == key_lines.end() ? line : it->second;
  }
  // The GPUs one instance takes: TP x DP, inside one node.
  int GpusPerInstance() const { return engine.tensor_parallel_size * dp; }
};

struct SloConfig {
  double ttft_s = cluster_settings::kSloTtftS.Default();
  double tpot_s = cluster_settings::kSloTpotS.Default();
};

struct GatewaysConfig {
  int count = cluster_settings::kGatewayCount.Default();
  RouterConfig router;
  // Picks the decode instance of a request routed to a prefill instance (the same
  // settings as `router` but the policy).
  RoutingPolicy decode_policy =
      *ParseRoutingPolicy(cluster_settings::kGatewayDecodePolicy.Default());
  // decode_scope: node -- the decode instance is picked among those on the prefill
  // instance's own node (its KV then moves over the node's GPU links), not the fleet's.
  bool decode_on_same_node = false;
  // The load view refreshes every staleness_s, rounded up to whole windows.
  double staleness_s = cluster_settings::kStalenessS.Default();
};

struct LatencyConfig {
  // The lookahead of the parallel run: routing and load snapshots happen on a grid of
  // steps this long. Must be positive.
  double gateway_to_instance_s = cluster_settings::kGatewayToInstanceUs.Default() / 1e6;
  // First token and completion reach the client this much later (default: the above).
  double instance_to_client_s = cluster_settings::kGatewayToInstanceUs.Default() / 1e6;
};

// Where one instance runs: its group, replica index, pool, node in the pool and first GPU
// on that node (its TP x DP ranks take consecutive GPUs of one node, DP rank by DP rank).
// Instances are numbered in group order, then replica order; this is the instance id
// everywhere. Placement is first fit: each instance, in id order, takes the first node of
// its pool with TP x DP free GPUs, starting at that node's next free GPU -- or, on a pool
// with `placement: spread`, the node with the most free GPUs (the lowest such node on a tie).
struct InstancePlacement {
  int32_t group = 0;
  int32_t replica = 0;
  int32_t pool = 0;
  int32_t node = 0;
  int32_t first_gpu = 0;
};

struct ClusterConfig {
  std::string file;
  std::string name;
  std::vector<NodePoolConfig> pools;
  std::vector<InstanceGroupConfig> groups;
  GatewaysConfig gateways;
  LatencyConfig latency;
  SloConfig slo;
  double timeseries_interval_s = cluster_settings::kTimeseriesIntervalS.Default();
  std::vector<InstancePlacement> placement;  // one per instance, by instance id
  int TotalInstances() const;
  // Whether any group has the prefill or decode role.
  bool disaggregated() const;
};

// Reads and checks a cluster config and places its instances; throws InputError naming
// the file, line and key of the first problem.
ClusterConfig LoadClusterConfig(const std::string& path);

}  // namespace fleetsim
