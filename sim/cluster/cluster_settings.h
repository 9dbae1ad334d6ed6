// The keys of a cluster config, each declared once (core/setting.h): the loader reads
// defaults and ranges from here, the config structs take their defaults from here, and a
// test checks every key table of docs/CLUSTER_CONFIG.md against `ClusterConfigSections()`.
// The `engine:` mapping's keys are the engine's own (engine/engine_settings.h).
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

#include "core/setting.h"
#include "core/sim_time.h"
#include "engine/engine_settings.h"

namespace fleetsim::cluster_settings {

using R = SettingRange;
using T = SettingType;

// Times are at most the largest simulated time (core/sim_time.h): 1e9 s.
inline constexpr double kMaxUs = kMaxSimSeconds * 1e6;

// Top level.
inline constexpr Setting<std::string_view> kName{
    {"name", T::kString, R::Any(), "", "the file name without extension", "The fleet's name"}};
inline constexpr SettingSpec kNodePools{"node_pools", T::kList, R::Any(),
                                        "",           "none",   "Node pools of one GPU type each"};
inline constexpr SettingSpec kInstanceGroups{"instance_groups", T::kList,         R::Any(), "",
                                             "required",        "Instance groups"};
inline constexpr SettingSpec kGateways{
    "gateways", T::kMapping, R::Any(), "", "{}", "The gateways and their routing policy"};
inline constexpr SettingSpec kLatency{"latency", T::kMapping, R::Any(),
                                      "",        "{}",        "Network latencies"};
inline constexpr SettingSpec kSlo{"slo", T::kMapping, R::Any(),
                                  "",    "{}",        "Service-level objectives for goodput"};
inline constexpr SettingSpec kTimeseries{
    "timeseries", T::kMapping, R::Any(), "", "{}", "The /timeseries sampling period"};

// node_pools[i].
inline constexpr Setting<std::string_view> kPoolName{
    {"name", T::kString, R::Any(), "", "required", "Unique among pools"}};
inline constexpr Setting<std::string_view> kPoolHardware{
    {"hardware", T::kString, R::Any(), "", "required", "A hardware catalog name or file"}};
inline constexpr Setting<int> kPoolNodes{
    {"nodes", T::kInteger, R::AtLeast(1), "nodes", "required", "Nodes in the pool"}};
inline constexpr Setting<int> kPoolGpusPerNode{{"gpus_per_node", T::kInteger, R::AtLeast(1), "GPUs",
                                                "the catalog's node.gpus_per_node",
                                                "GPUs per node"}};
// Where instances land on the pool's nodes: first_fit packs them, spread puts each on the
// node with the most free GPUs (a prefill and a decode group then share every node).
inline constexpr Setting<std::string_view> kPoolPlacement{
    {"placement", T::kString, R::Any(), "", "", "first_fit or spread"}, "first_fit"};

// instance_groups[i].
inline constexpr Setting<std::string_view> kGroupName{
    {"name", T::kString, R::Any(), "", "required", "Unique among groups"}};
inline constexpr Setting<std::string_view> kGroupModel{
    {"model", T::kString, R::Any(), "", "required", "A model in models/ or a model directory"}};
// The served model name is what a request's `model` must equal for the group to serve it
// (vLLM's --served-model-name); it also names the group's model's /summary row
// ("model:<name>"), which holds at most kMaxServedModelNameBytes of it.
inline constexpr std::size_t kMaxServedModelNameBytes = 25;
inline constexpr Setting<std::string_view> kGroupServedModelName{
    {"served_model_name", T::kString, R::Any(), "", "the model card's name",
     "The model name requests ask for"}};
inline constexpr Setting<std::string_view> kGroupPool{
    {"pool", T::kString, R::Any(), "", "--", "A node pool's name"}};
inline constexpr Setting<std::string_view> kGroupHardware{
    {"hardware", T::kString, R::Any(), "", "--", "A hardware catalog name or file"}};
inline constexpr Setting<std::string_view> kGroupBundle{
    {"bundle", T::kString, R::Any(), "", "", "A bundle directory, or analytic"}, "analytic"};
// The engine's tensor_parallel_size (its range and default), under the config's short name.
inline constexpr Setting<int> kGroupTp{
    {"tp", T::kInteger, engine_settings::kTensorParallelSize.spec.range, "GPUs", "",
     "Tensor-parallel degree"},
    engine_settings::kTensorParallelSize.Default()};
// vLLM's data_parallel_size and enable_expert_parallel (docs/COLLECTIVES.md, "Data
// parallelism with experts"): DP ranks, each with its own scheduler and KV cache, stepping
// in lock-step for the MoE layers whose experts are sharded over DP x TP GPUs of one node.
// One instance of the group is all its DP ranks (routers see one instance).
inline constexpr Setting<int> kGroupDp{
    {"dp", T::kInteger, R::AtLeast(1), "ranks", "",
     "Data-parallel ranks per instance (vLLM's data_parallel_size; MoE models with "
     "enable_expert_parallel)"},
    1};
inline constexpr Setting<bool> kGroupEnableExpertParallel{
    {"enable_expert_parallel", T::kBool, R::Any(), "", "",
     "Shard the experts over the DP x TP GPUs (needs dp > 1)"},
    false};
inline constexpr Setting<int> kGroupReplicas{
    {"replicas", T::kInteger, R::AtLeast(1), "instances", "", "Identical instances"}, 1};
inline constexpr SettingSpec kGroupEngine{"engine", T::kMapping, R::Any(),
                                          "",       "{}",        "vLLM engine settings"};
// Prefill/decode disaggregation (docs/DISAGGREGATION.md): a prefill group computes prompts
// and first tokens and hands each request's KV to a decode group of the same served model.
inline constexpr Setting<std::string_view> kGroupRole{
    {"role", T::kString, R::Any(), "", "", "mixed, prefill or decode"}, "mixed"};

// gateways.
inline constexpr Setting<int> kGatewayCount{
    {"count", T::kInteger, R::AtLeast(1), "gateways", "", "Gateways"}, 1};
inline constexpr Setting<std::string_view> kGatewayPolicy{
    {"policy", T::kString, R::Any(), "", "", "The routing policy"}, "least_outstanding"};
inline constexpr Setting<std::string_view> kGatewayDecodePolicy{
    {"decode_policy", T::kString, R::Any(), "", "",
     "The routing policy picking a prefill group's decode instance"},
    "least_kv"};
// Where a prefill instance's decode instance may be: anywhere (fleet) or on its own node
// (node), so that every KV transfer stays on the node's GPU links.
inline constexpr Setting<std::string_view> kGatewayDecodeScope{
    {"decode_scope", T::kString, R::Any(), "", "",
     "fleet, or node: decode instances on the prefill instance's node only"},
    "fleet"};
inline constexpr Setting<bool> kCapacityWeighted{
    {"capacity_weighted", T::kBool, R::Any(), "", "", "Weigh instances by capacity"}, false};
inline constexpr Setting<double> kStalenessS{
    {"staleness_s", T::kNumber, R::PositiveUpTo(kMaxSimSeconds), "s", "",
     "Load-view refresh period", "(seconds)"},
    0.05};
inline constexpr Setting<int> kPrefixBlocks{
    {"prefix_blocks", T::kInteger, R::AtLeast(1), "blocks", "",
     "prefix_affinity: trace prefix blocks forming the key"},
    4};
inline constexpr Setting<int> kVirtualNodes{{"virtual_nodes", T::kInteger, R::AtLeast(1), "points",
                                             "", "prefix_affinity: ring points per instance"},
                                            64};
inline constexpr Setting<int> kOverloadMargin{
    {"overload_margin", T::kInteger, R::NonNegative(), "requests", "",
     "prefix_affinity: outstanding requests above the least loaded that count as overload"},
    16};
inline constexpr Setting<double> kOverloadRatio{
    {"overload_ratio", T::kNumber, R::AtLeast(1), "", "",
     "prefix_affinity: ratio to the least loaded that counts as overload"},
    1.5};

// latency. The clock counts nanoseconds: a positive latency must be at least one.
inline constexpr Setting<double> kGatewayToInstanceUs{
    {"gateway_to_instance_us", T::kNumber, R::Between(1e-3, kMaxUs), "us", "",
     "Gateway -> instance latency; the time step of routing and load snapshots",
     "(1 ns): it is the time step of routing and load snapshots"},
    500.0};
inline constexpr Setting<double> kInstanceToClientUs{
    {"instance_to_client_us", T::kNumber, R::Between(0, kMaxUs), "us", "gateway_to_instance_us",
     "Instance -> client latency of first token and completion"}};

// slo.
inline constexpr Setting<double> kSloTtftS{{"ttft_s", T::kNumber, R::PositiveUpTo(kMaxSimSeconds),
                                            "s", "", "Time-to-first-token target", "(seconds)"},
                                           2.0};
inline constexpr Setting<double> kSloTpotS{{"tpot_s", T::kNumber, R::PositiveUpTo(kMaxSimSeconds),
                                            "s", "", "Time-per-output-token target", "(seconds)"},
                                           0.1};

// timeseries.
inline constexpr Setting<double> kTimeseriesIntervalS{
    {"interval_s", T::kNumber, R::PositiveUpTo(kMaxSimSeconds), "s", "",
     "Period of the /timeseries rows", "(seconds)"},
    1.0};

// One section of a cluster config and its keys, in the docs' order.
struct SettingSection {
  std::string_view name;  // "" for the top level, else "node_pools", "engine", ...
  std::vector<SettingDoc> settings;

  // The keys, for YamlSection::RejectUnknownKeys.
  std::vector<std::string_view> Keys() const;
};

// Every section: top level, node_pools, instance_groups, engine, gateways, latency, slo,
// timeseries.
const std::vector<SettingSection>& ClusterConfigSections();
const SettingSection& ClusterConfigSection(std::string_view name);

}  // namespace fleetsim::cluster_settings
