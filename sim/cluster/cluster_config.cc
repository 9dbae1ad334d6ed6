#include "cluster/cluster_config.h"

#include <cstddef>
#include <filesystem>
#include <memory>

#include "cluster/cluster_settings.h"
#include "core/project_paths.h"
#include "core/request_name.h"
#include "engine/engine_settings.h"
#include "model/hardware.h"

namespace fleetsim {
namespace {

// A pool's or group's name is a column of the output: refused when longer, never cut.
void RequireLabelWidth(const YamlSection& section, const std::string& name) {
  if (name.size() > kMaxLabelBytes) {
    section.Fail("name", "at most " + std::to_string(kMaxLabelBytes) +
                             " bytes (the output's name columns), not " +
                             std::to_string(name.size()));
  }
}

namespace fs = std::filesystem;
using namespace cluster_settings;

std::vector<std::string_view> KeysOf(std::string_view section) {
  return ClusterConfigSection(section).Keys();
}

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
    s.Fail("hardware", "unknown hardware " + QuoteInput(name) +
                           " (catalog: " + Join(HardwareNames(HardwareCatalogDir())) +
                           "; or a path to a hardware YAML file)");
  }
}

int CatalogGpusPerNode(const HardwareSpec& spec) {
  return static_cast<int>(spec.gpus_per_node.value);
}

NodePoolConfig ReadPool(const YamlSection& p, const std::string& base_dir) {
  p.RejectUnknownKeys(KeysOf("node_pools"));
  NodePoolConfig pool;
  pool.line = p.line();
  pool.name = p.Get<std::string>(kPoolName.key());
  if (pool.name.empty()) p.Fail(kPoolName.key(), "must not be empty");
  pool.hardware = p.Get<std::string>(kPoolHardware.key());
  pool.spec = ReadHardware(p, base_dir);
  pool.nodes = kPoolNodes.Get(p);
  pool.gpus_per_node = kPoolGpusPerNode.Find(p).value_or(CatalogGpusPerNode(pool.spec));
  const std::string placement(kPoolPlacement.Read(p));
  if (placement != "first_fit" && placement != "spread")
    p.Fail(kPoolPlacement.key(),
           "unknown placement '" + placement + "' (accepted: first_fit, spread)");
  pool.spread = placement == "spread";
  return pool;
}

// vLLM's speculative_config mapping; the engine applies the model-dependent refusals
// (engine/speculative.h), located at these keys' lines.
void ReadSpeculativeConfig(const YamlSection& s, InstanceGroupConfig& group) {
  using namespace engine_settings;
  s.RejectUnknownKeys(KeysOf(kSpeculativeConfig.key));
  for (const std::string& key : s.Keys())
    group.key_lines[key] = s.LineOf(key);
  EngineConfig& c = group.engine;
  c.speculative_method = kSpeculativeMethod.Read(s);
  c.num_speculative_tokens = kNumSpeculativeTokens.Get(s);
  if (s.Has(kSpeculativeAcceptance.key))
    c.speculative_acceptance = s.GetList<double>(kSpeculativeAcceptance.key);
}

void ReadEngine(const YamlSection& e, InstanceGroupConfig& group) {
  using namespace engine_settings;
  e.RejectUnknownKeys(KeysOf("engine"));
  // An engine setting the engine refuses later (an impossible attention pin, a quantized
  // layout vLLM would not load) is located at its own line, not the group's.
  for (const std::string& key : e.Keys())
    group.key_lines[key] = e.LineOf(key);
  EngineConfig& c = group.engine;
  c.max_num_seqs = kMaxNumSeqs.Find(e);
  c.max_num_batched_tokens = kMaxNumBatchedTokens.Find(e);
  c.max_model_len = kMaxModelLen.Find(e);
  c.enable_prefix_caching = kEnablePrefixCaching.Find(e);
  c.enable_chunked_prefill = kEnableChunkedPrefill.Read(e);
  c.async_scheduling = kAsyncScheduling.Read(e);
  c.block_size = kBlockSize.Find(e);
  c.long_prefill_token_threshold = kLongPrefillTokenThreshold.Read(e);
  c.kv_cache_dtype = kKvCacheDtype.Read(e);
  c.mamba_cache_dtype = kMambaCacheDtype.Read(e);
  c.mamba_ssm_cache_dtype = kMambaSsmCacheDtype.Read(e);
  c.attention_backend = kAttentionBackend.Read(e);
  c.decode_kernel = kDecodeKernel.Read(e);
  c.quantization = kQuantization.Read(e);
  c.quantization_group_size = kQuantizationGroupSize.Read(e);
  group.budget.gpu_memory_utilization = kGpuMemoryUtilization.Read(e);
  group.budget.kv_cache_bytes = kKvCacheMemoryBytes.Find(e);
  group.budget.num_blocks = kNumGpuBlocks.Find(e);
  group.step_overhead_us = kStepOverheadUs.Read(e);
  if (auto spec = e.FindChild(kSpeculativeConfig.key)) ReadSpeculativeConfig(*spec, group);
}

// Everything of a group but where it runs (AttachPool).
InstanceGroupConfig ReadGroup(const YamlSection& g, const std::string& base_dir) {
  g.RejectUnknownKeys(KeysOf("instance_groups"));
  InstanceGroupConfig group;
  group.file = g.file();
  group.line = g.line();
  for (const char* key : {"model", "served_model_name", "bundle", "hardware", "tp", "role", "dp",
                          "enable_expert_parallel"}) {
    if (g.Has(key)) group.key_lines[key] = g.LineOf(key);
  }
  group.name = g.Get<std::string>(kGroupName.key());
  group.model = g.Get<std::string>(kGroupModel.key());
  if (group.model.find('/') != std::string::npos) group.model = Resolve(base_dir, group.model);
  if (auto served = kGroupServedModelName.Find(g)) {
    group.served_model_name = std::string(*served);
    if (group.served_model_name.empty()) g.Fail(kGroupServedModelName.key(), "must not be empty");
    if (group.served_model_name.size() > kMaxServedModelNameBytes) {
      g.Fail(kGroupServedModelName.key(),
             QuoteInput(group.served_model_name) + " is longer than " +
                 std::to_string(kMaxServedModelNameBytes) +
                 " bytes, the most a /summary row name holds after 'model:'");
    }
    for (const char c : group.served_model_name) {
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
        g.Fail(kGroupServedModelName.key(), "holds a control character");
    }
  }
  // `analytic` (the default): fleetsim builds the bundle from its kernel model, cached.
  group.bundle = kGroupBundle.Read(g);
  if (group.bundle != kGroupBundle.Default()) {
    group.bundle = Resolve(base_dir, group.bundle);
    // No throwing overload: a name too long for the file system is a located error too.
    std::error_code error;
    if (!fs::exists(fs::path(group.bundle) / "meta.yaml", error)) {
      g.Fail("bundle", "no performance bundle (meta.yaml) at " + QuoteInput(group.bundle) +
                           (error ? " (" + error.message() + ")" : "") + " (or say: analytic)");
    }
  }
  group.engine.tensor_parallel_size = kGroupTp.Read(g);
  group.replicas = kGroupReplicas.Read(g);
  const std::string role = std::string(kGroupRole.Read(g));
  const std::optional<InstanceRole> parsed = ParseInstanceRole(role);
  if (!parsed) {
    g.Fail(kGroupRole.key(),
           "unknown role " + QuoteInput(role) + " (accepted: mixed, prefill, decode)");
  }
  group.role = *parsed;
  group.dp = kGroupDp.Read(g);
  group.enable_expert_parallel = kGroupEnableExpertParallel.Read(g);
  // vLLM runs the DP ranks of a dense model as independent engines (v1/engine/core.py
  // run_engine_core: "Non-MoE DP ranks are completely independent, so treat like DP=1"):
  // that is `replicas`. Lock-stepped DP is simulated with expert parallelism only, and EP
  // without DP (the experts sharded over the TP ranks alone) is not simulated. Whether the
  // model has MoE layers is checked when it is loaded (fleet/fleet_setup.cc).
  if (group.dp > 1 && !group.enable_expert_parallel) {
    g.Fail(kGroupDp.key(),
           "dp > 1 is simulated with expert parallelism only: add enable_expert_parallel: true "
           "(for a dense model, vLLM's DP ranks are independent engines: use replicas)");
  }
  if (group.enable_expert_parallel && group.dp == 1) {
    g.Fail(kGroupEnableExpertParallel.key(),
           "expert parallelism is simulated with data parallelism only: give dp > 1 (the "
           "experts of a dp: 1 instance stay tensor-parallel)");
  }
  if (group.dp > 1 && group.role != InstanceRole::kMixed) {
    g.Fail(kGroupDp.key(), "a " + std::string(InstanceRoleName(group.role)) +
                               " group runs dp: 1 (prefill/decode disaggregation with data "
                               "parallelism is not simulated)");
  }
  if (auto engine = g.FindChild(kGroupEngine.key)) ReadEngine(*engine, group);
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
  const int gpus = group.GpusPerInstance();
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
    if (gpus <= pool.gpus_per_node) {
      const int per_node = pool.gpus_per_node / gpus;
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
  if (gpus > pool.gpus_per_node) {
    // The expert dispatch is priced over one node's links (docs/COLLECTIVES.md); vLLM can
    // span nodes, fleetsim does not simulate it.
    g.Fail("dp", "DP " + std::to_string(group.dp) + " x TP " + std::to_string(tp) + " = " +
                     std::to_string(gpus) + " GPUs exceed the " +
                     std::to_string(pool.gpus_per_node) + " GPUs of one " + pool.spec.name +
                     " node of pool '" + pool.name +
                     "' (an instance's DP x TP GPUs stay inside a node)");
  }
  group.pool = pool.name;
  group.hardware = pool.spec.name;
  group.budget.hardware = pool.spec;
}

// "llama: 32 x TP 1, big: 4 x TP 2, moe: 2 x DP 2 x TP 1" and their GPU total, for the
// groups on `pool`.
std::string PoolDemand(const ClusterConfig& config, const std::string& pool, int& gpus) {
  std::string text;
  gpus = 0;
  for (const InstanceGroupConfig& g : config.groups) {
    if (g.pool != pool) continue;
    gpus += g.replicas * g.GpusPerInstance();
    text += (text.empty() ? "" : ", ") + g.name + ": " + std::to_string(g.replicas) + " x " +
            (g.dp > 1 ? "DP " + std::to_string(g.dp) + " x " : "") + "TP " +
            std::to_string(g.engine.tensor_parallel_size);
  }
  return text;
}

// First fit: each instance, in id order, takes the first node of its pool with TP x DP
// free GPUs, starting at that node's next free GPU. Spread: the node with the most free
// GPUs (ties: the lowest), so that consecutive groups share the nodes.
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
    const int gpus = group.GpusPerInstance();
    for (int r = 0; r < group.replicas; ++r) {
      std::size_t node = 0;
      while (node < used[p].size() && used[p][node] + gpus > pool.gpus_per_node)
        ++node;
      if (pool.spread) {
        for (std::size_t n = node + 1; n < used[p].size(); ++n) {
          if (used[p][n] < used[p][node]) node = n;
        }
      }
      if (node == used[p].size()) {
        int asked = 0;
        const std::string demand = PoolDemand(config, pool.name, asked);
        const int capacity = pool.nodes * pool.gpus_per_node;
        std::string why =
            "the groups on it ask for " + std::to_string(asked) + " GPUs (" + demand + ")";
        if (asked <= capacity) {
          why += ", but " + std::string(pool.spread ? "spread" : "first-fit") +
                 " placement leaves no node with " + std::to_string(gpus) + " free GPUs";
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
      used[p][node] += gpus;
    }
  }
  return placement;
}

void ReadGateways(const YamlSection& s, GatewaysConfig& gateways) {
  s.RejectUnknownKeys(KeysOf("gateways"));
  gateways.count = kGatewayCount.Read(s);
  RouterConfig& router = gateways.router;
  const std::string name = kGatewayPolicy.Read(s);
  const std::optional<RoutingPolicy> policy = ParseRoutingPolicy(name);
  if (!policy) {
    s.Fail(kGatewayPolicy.key(),
           "unknown routing policy '" + name + "' (accepted: " + Join(RoutingPolicyNames()) + ")");
  }
  router.policy = *policy;
  const std::string decode_name = std::string(kGatewayDecodePolicy.Read(s));
  const std::optional<RoutingPolicy> decode_policy = ParseRoutingPolicy(decode_name);
  if (!decode_policy) {
    s.Fail(kGatewayDecodePolicy.key(), "unknown routing policy '" + decode_name +
                                           "' (accepted: " + Join(RoutingPolicyNames()) + ")");
  }
  gateways.decode_policy = *decode_policy;
  const std::string scope(kGatewayDecodeScope.Read(s));
  if (scope != "fleet" && scope != "node")
    s.Fail(kGatewayDecodeScope.key(),
           "unknown decode scope '" + scope + "' (accepted: fleet, node)");
  gateways.decode_on_same_node = scope == "node";
  router.capacity_weighted = kCapacityWeighted.Read(s);
  gateways.staleness_s = kStalenessS.Read(s);
  router.prefix_blocks = kPrefixBlocks.Read(s);
  router.virtual_nodes = kVirtualNodes.Read(s);
  router.overload_margin = kOverloadMargin.Read(s);
  router.overload_ratio = kOverloadRatio.Read(s);
}

void ReadLatency(const YamlSection& s, LatencyConfig& latency) {
  s.RejectUnknownKeys(KeysOf("latency"));
  const double to_instance_us = kGatewayToInstanceUs.Read(s);
  const double to_client_us = kInstanceToClientUs.Find(s).value_or(to_instance_us);
  latency.gateway_to_instance_s = to_instance_us / 1e6;
  latency.instance_to_client_s = to_client_us / 1e6;
}

void ReadSlo(const YamlSection& s, SloConfig& slo) {
  s.RejectUnknownKeys(KeysOf("slo"));
  slo.ttft_s = kSloTtftS.Read(s);
  slo.tpot_s = kSloTpotS.Read(s);
}

}  // namespace

std::optional<InstanceRole> ParseInstanceRole(std::string_view name) {
  if (name == "mixed") return InstanceRole::kMixed;
  if (name == "prefill") return InstanceRole::kPrefill;
  if (name == "decode") return InstanceRole::kDecode;
  return std::nullopt;
}

std::string_view InstanceRoleName(InstanceRole role) {
  switch (role) {
    case InstanceRole::kMixed:
      return "mixed";
    case InstanceRole::kPrefill:
      return "prefill";
    case InstanceRole::kDecode:
      return "decode";
  }
  return "?";
}

bool ClusterConfig::disaggregated() const {
  for (const InstanceGroupConfig& g : groups) {
    if (g.role != InstanceRole::kMixed) return true;
  }
  return false;
}

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
  doc.RejectUnknownKeys(KeysOf(""));
  ClusterConfig config;
  config.file = path;
  const std::string base_dir = fs::path(path).parent_path().string();
  config.name = doc.GetOr<std::string>(kName.key(), fs::path(path).stem().string());

  for (const YamlSection& p : ListOfMappings(doc, std::string(kNodePools.key))) {
    config.pools.push_back(ReadPool(p, base_dir));
    RequireLabelWidth(p, config.pools.back().name);
    if (FindPool(config.pools, config.pools.back().name) != config.pools.size() - 1) {
      p.Fail("name", "duplicate node pool name '" + config.pools.back().name + "'");
    }
  }
  const std::size_t explicit_pools = config.pools.size();

  const std::vector<YamlSection> groups = ListOfMappings(doc, std::string(kInstanceGroups.key));
  if (groups.empty()) doc.Fail(kInstanceGroups.key, "needs a list of at least one instance group");
  for (const YamlSection& g : groups) {
    config.groups.push_back(ReadGroup(g, base_dir));
    RequireLabelWidth(g, config.groups.back().name);
    for (std::size_t j = 0; j + 1 < config.groups.size(); ++j) {
      if (config.groups[j].name == config.groups.back().name) {
        g.Fail("name", "duplicate instance group name '" + config.groups.back().name + "'");
      }
    }
    AttachPool(g, config.groups.back(), config.pools, explicit_pools, base_dir);
  }
  config.placement = Place(config, groups);

  if (auto gateways = doc.FindChild(kGateways.key)) ReadGateways(*gateways, config.gateways);
  if (auto latency = doc.FindChild(kLatency.key)) ReadLatency(*latency, config.latency);
  if (auto slo = doc.FindChild(kSlo.key)) ReadSlo(*slo, config.slo);
  if (auto timeseries = doc.FindChild(kTimeseries.key)) {
    timeseries->RejectUnknownKeys(KeysOf(kTimeseries.key));
    config.timeseries_interval_s = kTimeseriesIntervalS.Read(*timeseries);
  }
  return config;
}

}  // namespace fleetsim
