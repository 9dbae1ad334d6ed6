#include "sweep/point_config.h"

#include <fstream>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "cluster/cluster_settings.h"
#include "core/input_error.h"
#include "core/project_paths.h"
#include "model/hardware.h"

namespace fleetsim {
namespace {

namespace fs = std::filesystem;

// The scalar under `key` of a mapping, if there is one (reading through a const node
// never inserts the key).
std::optional<std::string> ScalarOf(const YAML::Node& map, const std::string& key) {
  const YAML::Node value = map[key];
  if (!value || !value.IsScalar()) return std::nullopt;
  return value.Scalar();
}

int IntOf(const YAML::Node& map, const std::string& key, int fallback) {
  const YAML::Node value = map[key];
  if (!value || value.IsNull()) return fallback;
  return value.as<int>();
}

// Rewrites map[key] as an absolute path against `dir`, when it is a relative path (when
// `paths_only`, only a value holding a '/' is a path; otherwise it is a catalog name).
void MakeAbsolute(YAML::Node map, const std::string& key, const fs::path& dir, bool paths_only) {
  const std::optional<std::string> value = ScalarOf(map, key);
  if (!value || value->empty() || fs::path(*value).is_absolute()) return;
  if (paths_only && value->find('/') == std::string::npos) return;
  map[key] = (dir / *value).lexically_normal().string();
}

// The mapping under `key`, created when absent or null.
YAML::Node MappingAt(YAML::Node parent, const std::string& key) {
  const YAML::Node& read = parent;
  if (!read[key] || !read[key].IsMap()) parent[key] = YAML::Node(YAML::NodeType::Map);
  return parent[key];
}

YAML::Node FindByName(const YAML::Node& list, const std::string& name) {
  if (list && list.IsSequence()) {
    for (const YAML::Node& item : list) {
      if (ScalarOf(item, "name") == name) return item;
    }
  }
  return YAML::Node(YAML::NodeType::Undefined);
}

// Nodes first fit needs to place every instance of the groups on pool `pool_name`
// (instances in id order, each on the first node with tp free GPUs).
int NodesNeeded(const YAML::Node& groups, const std::string& pool_name, int gpus_per_node) {
  std::vector<int> used;
  for (const YAML::Node& group : groups) {
    if (ScalarOf(group, "pool") != pool_name) continue;
    // An instance takes TP x DP GPUs of one node.
    const int tp = IntOf(group, "tp", 1) * IntOf(group, "dp", 1);
    if (tp > gpus_per_node) return 0;  // the config loader names this error
    for (int r = IntOf(group, "replicas", 1); r > 0; --r) {
      std::size_t node = 0;
      while (node < used.size() && used[node] + tp > gpus_per_node)
        ++node;
      if (node == used.size()) used.push_back(0);
      used[node] += tp;
    }
  }
  return static_cast<int>(used.size());
}

void ApplyHardwareAndGrow(YAML::Node root, YAML::Node group,
                          const std::optional<std::string>& hardware) {
  const std::optional<std::string> pool_name = ScalarOf(group, "pool");
  if (!pool_name) {
    // An implicit pool: the loader sizes it for the group.
    if (hardware) group["hardware"] = *hardware;
    return;
  }
  const YAML::Node& read = root;
  YAML::Node pool = FindByName(read["node_pools"], *pool_name);
  if (!pool) return;  // the base config loaded, so this does not happen
  if (hardware) {
    pool["hardware"] = *hardware;
    if (ScalarOf(group, "hardware")) group["hardware"] = *hardware;
  }
  int gpus_per_node = IntOf(pool, "gpus_per_node", 0);
  if (gpus_per_node == 0) {
    gpus_per_node = static_cast<int>(
        LoadHardware(HardwareCatalogDir(), *ScalarOf(pool, "hardware")).gpus_per_node.value);
  }
  const int needed = NodesNeeded(read["instance_groups"], *pool_name, gpus_per_node);
  if (needed > IntOf(pool, "nodes", 1)) pool["nodes"] = needed;
}

// Prefill/decode disaggregation: a colocated point makes the prefill group mixed and drops
// the decode group; a disaggregated one sets the decode group's TP, replicas and hardware.
void ApplyServing(YAML::Node root, YAML::Node group, const SweepSpec& spec,
                  const SweepPoint& point) {
  if (spec.decode_group.empty()) return;
  const YAML::Node& read = root;
  if (point.colocated()) {
    group.remove(std::string(cluster_settings::kGroupRole.key()));
    YAML::Node kept(YAML::NodeType::Sequence);
    for (const YAML::Node& g : read["instance_groups"]) {
      if (ScalarOf(g, "name") != spec.decode_group) kept.push_back(g);
    }
    root["instance_groups"] = kept;
    return;
  }
  YAML::Node decode = FindByName(read["instance_groups"], spec.decode_group);
  if (!decode) return;  // the spec loaded, so this does not happen
  if (point.decode_tp) decode[std::string(cluster_settings::kGroupTp.key())] = *point.decode_tp;
  if (point.decode_replicas)
    decode[std::string(cluster_settings::kGroupReplicas.key())] = *point.decode_replicas;
  ApplyHardwareAndGrow(root, decode, point.decode_hardware);
}

}  // namespace

std::string PointConfigYaml(const SweepSpec& spec, const SweepPoint& point) {
  YAML::Node root = YAML::LoadFile(spec.base);
  const YAML::Node& read = root;  // reading through a const node never inserts keys
  const fs::path base_dir = fs::path(spec.base).parent_path();
  for (YAML::Node pool : read["node_pools"])
    MakeAbsolute(pool, "hardware", base_dir, true);
  YAML::Node group;
  for (YAML::Node g : read["instance_groups"]) {
    MakeAbsolute(g, "model", base_dir, true);
    MakeAbsolute(g, "hardware", base_dir, true);
    if (ScalarOf(g, "bundle") != "analytic") MakeAbsolute(g, "bundle", base_dir, false);
    if (ScalarOf(g, "name") == spec.group) group = g;
  }
  if (!group) throw InputError(spec.base, 0, "instance_groups", "no group '" + spec.group + "'");

  using namespace cluster_settings;
  using namespace engine_settings;
  const auto at = [](YAML::Node node, std::string_view key) { return node[std::string(key)]; };
  if (point.tp) at(group, kGroupTp.key()) = *point.tp;
  if (point.dp) {
    // The simulator runs DP with expert parallelism, and EP only with DP > 1.
    at(group, kGroupDp.key()) = *point.dp;
    at(group, kGroupEnableExpertParallel.key()) = *point.dp > 1;
  }
  if (point.replicas) at(group, kGroupReplicas.key()) = *point.replicas;
  if (point.enable_prefix_caching || point.max_num_batched_tokens || point.max_num_seqs ||
      point.block_size) {
    YAML::Node engine = MappingAt(group, std::string(kGroupEngine.key));
    if (point.enable_prefix_caching)
      at(engine, kEnablePrefixCaching.key()) = *point.enable_prefix_caching;
    if (point.max_num_batched_tokens)
      at(engine, kMaxNumBatchedTokens.key()) = *point.max_num_batched_tokens;
    if (point.max_num_seqs) at(engine, kMaxNumSeqs.key()) = *point.max_num_seqs;
    if (point.block_size) at(engine, kBlockSize.key()) = *point.block_size;
  }
  if (point.policy || point.capacity_weighted) {
    YAML::Node gateways = MappingAt(root, std::string(kGateways.key));
    if (point.policy) at(gateways, kGatewayPolicy.key()) = *point.policy;
    if (point.capacity_weighted) at(gateways, kCapacityWeighted.key()) = *point.capacity_weighted;
  }
  ApplyServing(root, group, spec, point);
  ApplyHardwareAndGrow(root, group, point.hardware);

  YAML::Emitter out;
  out << root;
  // Nothing here depends on where the spec was run from: --collect compares the file
  // with what the spec gives now.
  return "# Point " + std::to_string(point.index) + " of sweep '" + spec.name +
         "': " + DescribePoint(point) + "\n# Generated by `fleetsim sweep` from " + spec.base +
         "; edit the sweep spec, not this file.\n" + out.c_str() + "\n";
}

void WritePointConfig(const SweepSpec& spec, const SweepPoint& point, const fs::path& path) {
  const std::string text = PointConfigYaml(spec, point);
  const fs::path staging = path.string() + ".tmp";
  {
    std::ofstream out(staging);
    out << text;
    if (!out) throw InputError(path.string(), 0, "", "cannot write the point's cluster config");
  }
  fs::rename(staging, path);
}

}  // namespace fleetsim
