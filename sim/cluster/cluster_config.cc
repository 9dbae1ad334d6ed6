#include "cluster/cluster_config.h"

#include <cstddef>
#include <filesystem>
#include <memory>

#include "core/project_paths.h"
#include "model/hardware.h"

namespace fleetsim {
namespace {

namespace fs = std::filesystem;

std::string Resolve(const std::string& base_dir, const std::string& path) {
  const fs::path p(path);
  return p.is_absolute() ? path : (fs::path(base_dir) / p).lexically_normal().string();
}

std::string Join(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names)
    out += (out.empty() ? "" : ", ") + name;
  return out;
}

// The elements of the list under `key`, each a mapping, as sections ("key[i]").
std::vector<YamlSection> ListOfMappings(const YamlSection& doc, const std::string& key) {
  std::vector<YamlSection> out;
  const YAML::Node list = doc.node()[key];
  if (!list || list.IsNull()) return out;
  if (!list.IsSequence()) doc.Fail(key, "expected a list of mappings");
  auto file = std::make_shared<const std::string>(doc.file());
  for (std::size_t i = 0; i < list.size(); ++i) {
    YamlSection item(list[i], file, key + "[" + std::to_string(i) + "]");
    if (!list[i].IsMap())
      throw InputError(doc.file(), item.line(), item.path(), "expected a mapping");
    out.push_back(std::move(item));
  }
  return out;
}

// `hardware:` of a pool or group: a catalog name, or a path to a catalog-format YAML file
// (relative to the config's folder).
HardwareSpec ReadHardware(const YamlSection& s, const std::string& base_dir) {
  std::string name = s.Get<std::string>("hardware");
  if (name.find('/') != std::string::npos) name = Resolve(base_dir, name);
  try {
    return LoadHardware(HardwareCatalogDir(), name);
  } catch (const InputError& e) {
    if (e.line() > 0) s.Fail("hardware", e.what());  // an error inside the hardware file
    s.Fail("hardware", "unknown hardware '" + name +
                           "' (catalog: " + Join(HardwareNames(HardwareCatalogDir())) +
                           "; or a path to a hardware YAML file)");
  }
}

int CatalogGpusPerNode(const HardwareSpec& spec) {
  return static_cast<int>(spec.gpus_per_node.value);
}

NodePoolConfig ReadPool(const YamlSection& p, const std::string& base_dir) {
  p.RejectUnknownKeys({"name", "hardware", "nodes", "gpus_per_node"});
  NodePoolConfig pool;
  pool.line = p.line();
  pool.name = p.Get<std::string>("name");
  if (pool.name.empty()) p.Fail("name", "must not be empty");
  pool.hardware = p.Get<std::string>("hardware");
  pool.spec = ReadHardware(p, base_dir);
  pool.nodes = p.Get<int>("nodes");
  if (pool.nodes < 1) p.Fail("nodes", "must be at least 1");
  pool.gpus_per_node = p.GetOr<int>("gpus_per_node", CatalogGpusPerNode(pool.spec));
  if (pool.gpus_per_node < 1) p.Fail("gpus_per_node", "must be at least 1");
  return pool;
}

void ReadEngine(const YamlSection& e, InstanceGroupConfig& group) {
  e.RejectUnknownKeys({"max_num_seqs", "max_num_batched_tokens", "max_model_len",
                       "enable_prefix_caching", "enable_chunked_prefill", "block_size",
                       "long_prefill_token_threshold", "kv_cache_dtype", "mamba_cache_dtype",
                       "mamba_ssm_cache_dtype", "gpu_memory_utilization", "kv_cache_memory_bytes",
                       "num_gpu_blocks", "step_overhead_us"});
  EngineConfig& c = group.engine;
  c.max_num_seqs = e.Find<int>("max_num_seqs");
  c.max_num_batched_tokens = e.Find<int>("max_num_batched_tokens");
  c.max_model_len = e.Find<int64_t>("max_model_len");
  c.enable_prefix_caching = e.Find<bool>("enable_prefix_caching");
  c.enable_chunked_prefill = e.GetOr<bool>("enable_chunked_prefill", true);
  c.block_size = e.Find<int>("block_size");
  c.long_prefill_token_threshold = e.GetOr<int>("long_prefill_token_threshold", 0);
  c.kv_cache_dtype = e.GetOr<std::string>("kv_cache_dtype", "auto");
  c.mamba_cache_dtype = e.GetOr<std::string>("mamba_cache_dtype", "auto");
  c.mamba_ssm_cache_dtype = e.GetOr<std::string>("mamba_ssm_cache_dtype", "auto");
  group.budget.gpu_memory_utilization = e.GetOr<double>("gpu_memory_utilization", 0.9);
  if (group.budget.gpu_memory_utilization <= 0 || group.budget.gpu_memory_utilization > 1) {
    e.Fail("gpu_memory_utilization", "must be in (0, 1]");
  }
  group.budget.kv_cache_bytes = e.Find<int64_t>("kv_cache_memory_bytes");
  group.budget.num_blocks = e.Find<int64_t>("num_gpu_blocks");
  group.step_overhead_us = e.GetOr<double>("step_overhead_us", group.step_overhead_us);
  if (group.step_overhead_us < 0) e.Fail("step_overhead_us", "must not be negative");
}

// Everything of a group but where it runs (AttachPool).
InstanceGroupConfig ReadGroup(const YamlSection& g, const std::string& base_dir) {
  g.RejectUnknownKeys({"name", "model", "pool", "hardware", "bundle", "tp", "replicas", "engine"});
  InstanceGroupConfig group;
  group.file = g.file();
  group.line = g.line();
  for (const char* key : {"model", "bundle", "hardware", "tp"}) {
    if (g.Has(key)) group.key_lines[key] = g.LineOf(key);
  }
  group.name = g.Get<std::string>("name");
  group.model = g.Get<std::string>("model");
  if (group.model.find('/') != std::string::npos) group.model = Resolve(base_dir, group.model);
  // `analytic` (the default): fleetsim builds the bundle from its kernel model, cached.
  group.bundle = g.GetOr<std::string>("bundle", "analytic");
  if (group.bundle != "analytic") {
    group.bundle = Resolve(base_dir, group.bundle);
    if (!fs::exists(fs::path(group.bundle) / "meta.yaml")) {
      g.Fail("bundle",
             "no performance bundle (meta.yaml) at " + group.bundle + " (or say: analytic)");
    }
  }
  group.engine.tensor_parallel_size = g.GetOr<int>("tp", 1);
  if (group.engine.tensor_parallel_size < 1) g.Fail("tp", "must be at least 1");
  group.replicas = g.GetOr<int>("replicas", 1);
  if (group.replicas <= 0) g.Fail("replicas", "must be positive");
  if (auto engine = g.FindChild("engine")) ReadEngine(*engine, group);
  return group;
}

std::optional<std::size_t> FindPool(const std::vector<NodePoolConfig>& pools,
                                    const std::string& name) {
  for (std::size_t i = 0; i < pools.size(); ++i) {
    if (pools[i].name == name) return i;
  }
  return std::nullopt;
}

// Resolves the group's `pool:` / `hardware:` (adding an implicit pool for a group that gives
// only hardware), fills group.pool, group.hardware and group.budget.hardware, and checks
// that its TP fits in one node. The first `explicit_pools` pools come from node_pools.
void AttachPool(const YamlSection& g, InstanceGroupConfig& group,
                std::vector<NodePoolConfig>& pools, std::size_t explicit_pools,
                const std::string& base_dir) {
  const std::optional<std::string> pool_name = g.Find<std::string>("pool");
  const bool has_hardware = g.Has("hardware");
  if (!pool_name && !has_hardware) {
    g.Fail("pool",
           "missing: give the node pool the group runs on (pool:) or its hardware (hardware:)");
  }
  const int tp = group.engine.tensor_parallel_size;
  std::size_t index = 0;
  if (pool_name) {
    std::optional<std::size_t> found = FindPool(pools, *pool_name);
    if (!found || *found >= explicit_pools) {
      std::vector<std::string> names;
      for (std::size_t i = 0; i < explicit_pools; ++i)
        names.push_back(pools[i].name);
      std::string message = "unknown node pool '" + *pool_name +
                            "' (node_pools: " + (names.empty() ? "none defined" : Join(names)) +
                            ")";
      if (found) message += "; '" + *pool_name + "' is the implicit pool of a group, not shared";
      g.Fail("pool", message);
    }
    index = *found;
    if (has_hardware) {
      const HardwareSpec spec = ReadHardware(g, base_dir);
      if (spec.name != pools[index].spec.name) {
        const std::string written = g.Get<std::string>("hardware");
        g.Fail("hardware",
               "'" + written + "'" + (written == spec.name ? "" : " (" + spec.name + ")") +
                   " is not the hardware of node pool '" + pools[index].name + "' (" +
                   pools[index].spec.name + "); give only pool:, or hardware that agrees with it");
      }
    }
  } else {
    if (FindPool(pools, group.name)) {
      g.Fail("name", "a group with only hardware: gets a node pool named after it, and '" +
                         group.name + "' is already a node pool; give pool: " + group.name +
                         " or rename the group");
    }
    NodePoolConfig pool;
    pool.name = group.name;
    pool.hardware = g.Get<std::string>("hardware");
    pool.spec = ReadHardware(g, base_dir);
    pool.gpus_per_node = CatalogGpusPerNode(pool.spec);
    pool.implicit = true;
    pool.line = g.line();
    if (tp <= pool.gpus_per_node) {
      const int per_node = pool.gpus_per_node / tp;
      pool.nodes = (group.replicas + per_node - 1) / per_node;
    }
    pools.push_back(std::move(pool));
    index = pools.size() - 1;
  }
  const NodePoolConfig& pool = pools[index];
  if (tp > pool.gpus_per_node) {
    g.Fail("tp", "TP " + std::to_string(tp) + " exceeds the " + std::to_string(pool.gpus_per_node) +
                     " GPUs of one " + pool.spec.name + " node of pool '" + pool.name +
                     "' (tensor parallelism stays inside a node)");
  }
  group.pool = pool.name;
  group.hardware = pool.spec.name;
  group.budget.hardware = pool.spec;
}

// "llama: 32 x TP 1, big: 4 x TP 2" and their GPU total, for the groups on `pool`.
std::string PoolDemand(const ClusterConfig& config, const std::string& pool, int& gpus) {
  std::string text;
  gpus = 0;
  for (const InstanceGroupConfig& g : config.groups) {
    if (g.pool != pool) continue;
    gpus += g.replicas * g.engine.tensor_parallel_size;
    text += (text.empty() ? "" : ", ") + g.name + ": " + std::to_string(g.replicas) + " x TP " +
            std::to_string(g.engine.tensor_parallel_size);
  }
  return text;
}

// First fit: each instance, in id order, takes the first node of its pool with TP free
// GPUs, starting at that node's next free GPU.
std::vector<InstancePlacement> Place(const ClusterConfig& config,
                                     const std::vector<YamlSection>& group_sections) {
  std::vector<std::vector<int>> used(config.pools.size());
  for (std::size_t p = 0; p < config.pools.size(); ++p) {
    used[p].assign(static_cast<std::size_t>(config.pools[p].nodes), 0);
  }
  std::vector<InstancePlacement> placement;
  placement.reserve(static_cast<std::size_t>(config.TotalInstances()));
  for (std::size_t g = 0; g < config.groups.size(); ++g) {
    const InstanceGroupConfig& group = config.groups[g];
    const std::size_t p = *FindPool(config.pools, group.pool);
    const NodePoolConfig& pool = config.pools[p];
    const int tp = group.engine.tensor_parallel_size;
    for (int r = 0; r < group.replicas; ++r) {
      std::size_t node = 0;
      while (node < used[p].size() && used[p][node] + tp > pool.gpus_per_node)
        ++node;
      if (node == used[p].size()) {
        int asked = 0;
        const std::string demand = PoolDemand(config, pool.name, asked);
        const int capacity = pool.nodes * pool.gpus_per_node;
        std::string why =
            "the groups on it ask for " + std::to_string(asked) + " GPUs (" + demand + ")";
        if (asked <= capacity) {
          why +=
              ", but first-fit placement leaves no node with " + std::to_string(tp) + " free GPUs";
        }
        group_sections[g].Fail(
            "replicas", "node pool '" + pool.name + "' (" + std::to_string(pool.nodes) +
                            " nodes x " + std::to_string(pool.gpus_per_node) +
                            " GPUs = " + std::to_string(capacity) + ") cannot hold replica " +
                            std::to_string(r + 1) + " of " + std::to_string(group.replicas) +
                            " of group '" + group.name + "': " + why +
                            "; add nodes or lower replicas");
      }
      placement.push_back({static_cast<int32_t>(g), static_cast<int32_t>(r),
                           static_cast<int32_t>(p), static_cast<int32_t>(node),
                           static_cast<int32_t>(used[p][node])});
      used[p][node] += tp;
    }
  }
  return placement;
}

void ReadGateways(const YamlSection& s, GatewaysConfig& gateways) {
  s.RejectUnknownKeys({"count", "policy", "capacity_weighted", "staleness_s", "prefix_blocks",
                       "virtual_nodes", "overload_margin", "overload_ratio"});
  gateways.count = s.GetOr<int>("count", gateways.count);
  if (gateways.count < 1) s.Fail("count", "must be at least 1");
  RouterConfig& router = gateways.router;
  if (auto name = s.Find<std::string>("policy")) {
    const std::optional<RoutingPolicy> policy = ParseRoutingPolicy(*name);
    if (!policy) {
      s.Fail("policy", "unknown routing policy '" + *name +
                           "' (accepted: " + Join(RoutingPolicyNames()) + ")");
    }
    router.policy = *policy;
  }
  router.capacity_weighted = s.GetOr<bool>("capacity_weighted", router.capacity_weighted);
  gateways.staleness_s = s.GetOr<double>("staleness_s", gateways.staleness_s);
  if (!(gateways.staleness_s > 0)) s.Fail("staleness_s", "must be positive (seconds)");
  router.prefix_blocks = s.GetOr<int>("prefix_blocks", router.prefix_blocks);
  if (router.prefix_blocks < 1) s.Fail("prefix_blocks", "must be at least 1");
  router.virtual_nodes = s.GetOr<int>("virtual_nodes", router.virtual_nodes);
  if (router.virtual_nodes < 1) s.Fail("virtual_nodes", "must be at least 1");
  router.overload_margin = s.GetOr<int>("overload_margin", router.overload_margin);
  if (router.overload_margin < 0) s.Fail("overload_margin", "must not be negative");
  router.overload_ratio = s.GetOr<double>("overload_ratio", router.overload_ratio);
  if (!(router.overload_ratio >= 1)) s.Fail("overload_ratio", "must be at least 1");
}

// The clock counts nanoseconds: a positive latency must be at least one.
constexpr double kMinLatencyUs = 1e-3;

void ReadLatency(const YamlSection& s, LatencyConfig& latency) {
  s.RejectUnknownKeys({"gateway_to_instance_us", "instance_to_client_us"});
  const double to_instance_us = s.GetOr<double>("gateway_to_instance_us", 500.0);
  if (!(to_instance_us >= kMinLatencyUs)) {
    s.Fail("gateway_to_instance_us",
           "must be positive, at least 0.001 (1 ns): it is the time step of routing and load "
           "snapshots");
  }
  const double to_client_us = s.GetOr<double>("instance_to_client_us", to_instance_us);
  if (!(to_client_us >= 0)) s.Fail("instance_to_client_us", "must not be negative");
  latency.gateway_to_instance_s = to_instance_us / 1e6;
  latency.instance_to_client_s = to_client_us / 1e6;
}

void ReadSlo(const YamlSection& s, SloConfig& slo) {
  s.RejectUnknownKeys({"ttft_s", "tpot_s"});
  slo.ttft_s = s.GetOr<double>("ttft_s", slo.ttft_s);
  if (!(slo.ttft_s > 0)) s.Fail("ttft_s", "must be positive (seconds)");
  slo.tpot_s = s.GetOr<double>("tpot_s", slo.tpot_s);
  if (!(slo.tpot_s > 0)) s.Fail("tpot_s", "must be positive (seconds)");
}

}  // namespace

int ClusterConfig::TotalInstances() const {
  int total = 0;
  for (const InstanceGroupConfig& g : groups)
    total += g.replicas;
  return total;
}

ClusterConfig LoadClusterConfig(const std::string& path) {
  const YamlSection doc = LoadYamlFile(path);
  if (!doc.node().IsMap()) {
    throw InputError(path, doc.line(), "", "expected a mapping of cluster config sections");
  }
  doc.RejectUnknownKeys(
      {"name", "node_pools", "instance_groups", "gateways", "latency", "slo", "timeseries"});
  ClusterConfig config;
  config.file = path;
  const std::string base_dir = fs::path(path).parent_path().string();
  config.name = doc.GetOr<std::string>("name", fs::path(path).stem().string());

  for (const YamlSection& p : ListOfMappings(doc, "node_pools")) {
    config.pools.push_back(ReadPool(p, base_dir));
    if (FindPool(config.pools, config.pools.back().name) != config.pools.size() - 1) {
      p.Fail("name", "duplicate node pool name '" + config.pools.back().name + "'");
    }
  }
  const std::size_t explicit_pools = config.pools.size();

  const std::vector<YamlSection> groups = ListOfMappings(doc, "instance_groups");
  if (groups.empty()) doc.Fail("instance_groups", "needs a list of at least one instance group");
  for (const YamlSection& g : groups) {
    config.groups.push_back(ReadGroup(g, base_dir));
    for (std::size_t j = 0; j + 1 < config.groups.size(); ++j) {
      if (config.groups[j].name == config.groups.back().name) {
        g.Fail("name", "duplicate instance group name '" + config.groups.back().name + "'");
      }
    }
    AttachPool(g, config.groups.back(), config.pools, explicit_pools, base_dir);
  }
  config.placement = Place(config, groups);

  if (auto gateways = doc.FindChild("gateways")) ReadGateways(*gateways, config.gateways);
  if (auto latency = doc.FindChild("latency")) ReadLatency(*latency, config.latency);
  if (auto slo = doc.FindChild("slo")) ReadSlo(*slo, config.slo);
  if (auto timeseries = doc.FindChild("timeseries")) {
    timeseries->RejectUnknownKeys({"interval_s"});
    config.timeseries_interval_s =
        timeseries->GetOr<double>("interval_s", config.timeseries_interval_s);
    if (!(config.timeseries_interval_s > 0)) {
      timeseries->Fail("interval_s", "must be positive (seconds)");
    }
  }
  return config;
}

}  // namespace fleetsim
