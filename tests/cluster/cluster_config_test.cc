#include "cluster/cluster_config.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cluster/cluster_test_support.h"
#include "cluster/routing_policy.h"
#include "core/input_error.h"
#include "support/input_error.h"
#include "support/shared_data.h"
#include "support/temp_file.h"

namespace fleetsim {
namespace {

using testing::CatchInputError;
using testing::Mentions;
using testing::TempFile;

using testing::LoadError;
using testing::ProjectFile;

ClusterConfig Load(const std::string& yaml) {
  return testing::LoadYaml(yaml);
}

// Lines 1-3: two pools; lines 4-5: one group on h100. Tests append sections from line 6.
const std::string kTwoPools =
    "node_pools:\n"
    "  - {name: h100, hardware: H100-SXM, nodes: 2}\n"
    "  - {name: a100, hardware: A100-SXM-80GB, nodes: 1}\n"
    "instance_groups:\n"
    "  - {name: llama, model: llama-3.1-8b, pool: h100, tp: 1, replicas: 4}\n";

struct Where {
  int group, replica, pool, node, first_gpu;
};

void ExpectPlacement(const ClusterConfig& config, const std::vector<Where>& expected) {
  ASSERT_EQ(config.placement.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const InstancePlacement& p = config.placement[i];
    const Where& w = expected[i];
    EXPECT_EQ((std::vector<int>{p.group, p.replica, p.pool, p.node, p.first_gpu}),
              (std::vector<int>{w.group, w.replica, w.pool, w.node, w.first_gpu}))
        << "instance " << i;
  }
}

// --- shipped configs ---

TEST(ClusterConfig, DefaultFleetLoads) {
  const ClusterConfig c = LoadClusterConfig(ProjectFile("cluster_configs/default_fleet.yaml"));
  EXPECT_EQ(c.name, "default_fleet");
  ASSERT_EQ(c.pools.size(), 2u);
  EXPECT_EQ(c.pools[0].spec.name, "H100-SXM");
  EXPECT_EQ(c.pools[1].spec.name, "A100-SXM-80GB");
  for (const NodePoolConfig& pool : c.pools) {
    EXPECT_EQ(pool.nodes, 4);
    EXPECT_EQ(pool.gpus_per_node, 8);
    EXPECT_FALSE(pool.implicit);
  }
  ASSERT_EQ(c.groups.size(), 2u);
  EXPECT_EQ(c.TotalInstances(), 64);
  ASSERT_EQ(c.placement.size(), 64u);
  for (std::size_t i = 0; i < c.placement.size(); ++i) {
    const InstancePlacement& p = c.placement[i];
    const int id = static_cast<int>(i);
    EXPECT_EQ(p.group, id / 32);
    EXPECT_EQ(p.pool, id / 32);
    EXPECT_EQ(p.replica, id % 32);
    EXPECT_EQ(p.node, (id % 32) / 8);
    EXPECT_EQ(p.first_gpu, id % 8);
  }
  for (const InstanceGroupConfig& g : c.groups) {
    EXPECT_EQ(g.model, "llama-3.1-8b");
    EXPECT_EQ(g.bundle, "analytic");
    EXPECT_EQ(g.engine.tensor_parallel_size, 1);
    EXPECT_EQ(g.engine.enable_prefix_caching, true);
    ASSERT_TRUE(g.budget.hardware.has_value());
    EXPECT_EQ(g.budget.hardware->name, g.hardware);
  }
  EXPECT_EQ(c.groups[0].hardware, "H100-SXM");
  EXPECT_EQ(c.groups[1].hardware, "A100-SXM-80GB");
  EXPECT_EQ(c.gateways.count, 2);
  EXPECT_EQ(c.gateways.router.policy, RoutingPolicy::kLeastOutstanding);
  EXPECT_TRUE(c.gateways.router.capacity_weighted);
  EXPECT_DOUBLE_EQ(c.latency.gateway_to_instance_s, 500e-6);
  EXPECT_DOUBLE_EQ(c.latency.instance_to_client_s, 500e-6);
  EXPECT_DOUBLE_EQ(c.slo.ttft_s, 2.0);
  EXPECT_DOUBLE_EQ(c.slo.tpot_s, 0.1);
}

TEST(ClusterConfig, HybridExampleGetsAnImplicitPool) {
  const ClusterConfig c =
      LoadClusterConfig(ProjectFile("cluster_configs/single_node_hybrid_instance.yaml"));
  ASSERT_EQ(c.pools.size(), 1u);
  EXPECT_TRUE(c.pools[0].implicit);
  EXPECT_EQ(c.pools[0].name, "qwen27b-rtxpro6000");
  EXPECT_EQ(c.pools[0].nodes, 1);
  EXPECT_EQ(c.groups[0].pool, "qwen27b-rtxpro6000");
  EXPECT_EQ(c.groups[0].hardware, "RTX-PRO-6000");
  ASSERT_TRUE(c.groups[0].budget.hardware.has_value());
  EXPECT_EQ(c.groups[0].budget.hardware->name, "RTX-PRO-6000");
  EXPECT_DOUBLE_EQ(c.slo.ttft_s, 3.0);
  ExpectPlacement(c, {{0, 0, 0, 0, 0}});
}

TEST(ClusterConfig, SingleInstanceExampleLoads) {
  FLEETSIM_REQUIRE_SHARED_DATA();
  const ClusterConfig c =
      LoadClusterConfig(ProjectFile("cluster_configs/single_node_single_instance.yaml"));
  EXPECT_EQ(c.groups[0].hardware, "RTX-4090");
  EXPECT_EQ(c.groups[0].budget.num_blocks, 2588);
  EXPECT_EQ(c.TotalInstances(), 1);
  ExpectPlacement(c, {{0, 0, 0, 0, 0}});
}

TEST(ClusterConfig, ReadsSpeculativeConfigAndLocatesItsKeys) {
  const std::string group =
      "  - name: mtp\n"                         // line 6
      "    model: qwen3.8-27b\n"                // 7
      "    pool: h100\n"                        // 8
      "    engine:\n"                           // 9
      "      speculative_config:\n"             // 10
      "        method: mtp\n"                   // 11
      "        num_speculative_tokens: 3\n"     // 12
      "        acceptance: [0.9, 0.7, 0.5]\n";  // 13
  const ClusterConfig c = Load(kTwoPools + group);
  const EngineConfig& e = c.groups[1].engine;
  EXPECT_EQ(e.speculative_method, "mtp");
  EXPECT_EQ(e.num_speculative_tokens, 3);
  ASSERT_TRUE(e.speculative_acceptance.has_value());
  EXPECT_EQ(*e.speculative_acceptance, (std::vector<double>{0.9, 0.7, 0.5}));
  EXPECT_EQ(c.groups[1].LineOf("acceptance"), 13);          // where the engine's refusals point
  EXPECT_EQ(c.groups[0].engine.num_speculative_tokens, 0);  // absent: off

  std::string zero = kTwoPools + group;
  zero.replace(zero.find("tokens: 3"), 9, "tokens: 0");
  LoadError(zero, 12, "instance_groups[1].engine.speculative_config.num_speculative_tokens");
}

// --- defaults, pools and placement ---

TEST(ClusterConfig, Defaults) {
  const TempFile file("my_fleet.yaml",
                      "instance_groups:\n"
                      "  - {name: g, model: llama-3.1-8b, hardware: H100-SXM}\n");
  const ClusterConfig c = LoadClusterConfig(file.path());
  EXPECT_EQ(c.name, "my_fleet");
  EXPECT_EQ(c.groups[0].replicas, 1);
  EXPECT_EQ(c.groups[0].engine.tensor_parallel_size, 1);
  EXPECT_EQ(c.groups[0].bundle, "analytic");
  EXPECT_EQ(c.gateways.count, 1);
  EXPECT_EQ(c.gateways.router.policy, RoutingPolicy::kLeastOutstanding);
  EXPECT_FALSE(c.gateways.router.capacity_weighted);
  EXPECT_EQ(c.gateways.router.prefix_blocks, 4);
  EXPECT_EQ(c.gateways.router.virtual_nodes, 64);
  EXPECT_EQ(c.gateways.router.overload_margin, 16);
  EXPECT_DOUBLE_EQ(c.gateways.router.overload_ratio, 1.5);
  EXPECT_DOUBLE_EQ(c.gateways.staleness_s, 0.05);
  EXPECT_DOUBLE_EQ(c.latency.gateway_to_instance_s, 500e-6);
  EXPECT_DOUBLE_EQ(c.latency.instance_to_client_s, 500e-6);
  EXPECT_DOUBLE_EQ(c.slo.ttft_s, 2.0);
  EXPECT_DOUBLE_EQ(c.slo.tpot_s, 0.1);
  EXPECT_DOUBLE_EQ(c.timeseries_interval_s, 1.0);
}

TEST(ClusterConfig, ReadsEveryGatewayLatencyAndTimeseriesKey) {
  const ClusterConfig c = Load(kTwoPools +
                               "gateways: {count: 3, policy: prefix_affinity, capacity_weighted: "
                               "true, staleness_s: 0.2, prefix_blocks: 2, virtual_nodes: 16, "
                               "overload_margin: 0, overload_ratio: 1}\n"
                               "latency: {gateway_to_instance_us: 250, instance_to_client_us: 0}\n"
                               "timeseries: {interval_s: 0.5}\n");
  EXPECT_EQ(c.gateways.count, 3);
  EXPECT_EQ(c.gateways.router.policy, RoutingPolicy::kPrefixAffinity);
  EXPECT_TRUE(c.gateways.router.capacity_weighted);
  EXPECT_DOUBLE_EQ(c.gateways.staleness_s, 0.2);
  EXPECT_EQ(c.gateways.router.prefix_blocks, 2);
  EXPECT_EQ(c.gateways.router.virtual_nodes, 16);
  EXPECT_EQ(c.gateways.router.overload_margin, 0);
  EXPECT_DOUBLE_EQ(c.gateways.router.overload_ratio, 1.0);
  EXPECT_DOUBLE_EQ(c.latency.gateway_to_instance_s, 250e-6);
  EXPECT_DOUBLE_EQ(c.latency.instance_to_client_s, 0.0);
  EXPECT_DOUBLE_EQ(c.timeseries_interval_s, 0.5);
}

TEST(ClusterConfig, InstanceToClientDefaultsToGatewayToInstance) {
  const ClusterConfig c = Load(kTwoPools + "latency: {gateway_to_instance_us: 200}\n");
  EXPECT_DOUBLE_EQ(c.latency.gateway_to_instance_s, 200e-6);
  EXPECT_DOUBLE_EQ(c.latency.instance_to_client_s, 200e-6);
}

TEST(ClusterConfig, PoolsTakeGpusPerNodeAndLinksFromTheCatalog) {
  const ClusterConfig c = Load(kTwoPools);
  ASSERT_EQ(c.pools.size(), 2u);  // the unused a100 pool stays
  EXPECT_EQ(c.pools[0].name, "h100");
  EXPECT_EQ(c.pools[0].hardware, "H100-SXM");
  EXPECT_EQ(c.pools[0].nodes, 2);
  EXPECT_EQ(c.pools[0].gpus_per_node, 8);
  EXPECT_EQ(c.pools[0].line, 2);
  EXPECT_EQ(c.pools[0].spec.intra_node.kind, "nvlink4");
  EXPECT_EQ(c.pools[1].spec.name, "A100-SXM-80GB");
  EXPECT_EQ(c.groups[0].pool, "h100");
  EXPECT_EQ(c.groups[0].hardware, "H100-SXM");
  EXPECT_EQ(c.groups[0].budget.hardware->name, "H100-SXM");
  ExpectPlacement(c, {{0, 0, 0, 0, 0}, {0, 1, 0, 0, 1}, {0, 2, 0, 0, 2}, {0, 3, 0, 0, 3}});
}

TEST(ClusterConfig, GpusPerNodeOverridesTheCatalogForPlacementAndTp) {
  const ClusterConfig c = Load(
      "node_pools: [{name: p, hardware: H100-SXM, nodes: 2, gpus_per_node: 4}]\n"
      "instance_groups: [{name: g, model: llama-3.1-8b, pool: p, tp: 2, replicas: 4}]\n");
  ExpectPlacement(c, {{0, 0, 0, 0, 0}, {0, 1, 0, 0, 2}, {0, 2, 0, 1, 0}, {0, 3, 0, 1, 2}});
  const InputError e = LoadError(
      "node_pools: [{name: p, hardware: H100-SXM, nodes: 2, gpus_per_node: 4}]\n"
      "instance_groups:\n"
      "  - {name: g, model: llama-3.1-8b, pool: p,\n"
      "     tp: 8}\n",
      4, "instance_groups[0].tp");
  EXPECT_TRUE(Mentions(e, "4 GPUs")) << e.what();
}

TEST(ClusterConfig, FirstFitWithMixedTp) {
  // tp 4 + tp 2 + tp 2 fill node 0; the tp 1 replicas go to node 1.
  const ClusterConfig c = Load(
      "node_pools: [{name: p, hardware: H100-SXM, nodes: 2}]\n"
      "instance_groups:\n"
      "  - {name: big, model: llama-3.1-8b, pool: p, tp: 4, replicas: 1}\n"
      "  - {name: mid, model: llama-3.1-8b, pool: p, tp: 2, replicas: 2}\n"
      "  - {name: small, model: llama-3.1-8b, pool: p, tp: 1, replicas: 4}\n");
  ExpectPlacement(c, {{0, 0, 0, 0, 0},
                      {1, 0, 0, 0, 4},
                      {1, 1, 0, 0, 6},
                      {2, 0, 0, 1, 0},
                      {2, 1, 0, 1, 1},
                      {2, 2, 0, 1, 2},
                      {2, 3, 0, 1, 3}});
}

TEST(ClusterConfig, FirstFitTakesTheFirstNodeWithRoom) {
  // Three tp 1 then a tp 4 on node 0 leave one GPU there: the second tp 4 and both tp 2
  // go to node 1, though node 0 still has a free GPU.
  const ClusterConfig c = Load(
      "node_pools: [{name: p, hardware: H100-SXM, nodes: 2}]\n"
      "instance_groups:\n"
      "  - {name: a, model: llama-3.1-8b, pool: p, tp: 1, replicas: 3}\n"
      "  - {name: b, model: llama-3.1-8b, pool: p, tp: 4, replicas: 2}\n"
      "  - {name: c, model: llama-3.1-8b, pool: p, tp: 2, replicas: 2}\n");
  ExpectPlacement(c, {{0, 0, 0, 0, 0},
                      {0, 1, 0, 0, 1},
                      {0, 2, 0, 0, 2},
                      {1, 0, 0, 0, 3},
                      {1, 1, 0, 1, 0},
                      {2, 0, 0, 1, 4},
                      {2, 1, 0, 1, 6}});
}

TEST(ClusterConfig, SpreadPlacementPutsEachInstanceOnTheNodeWithTheMostFreeGpus) {
  // A prefill group then a decode group: first fit gives the prefill group node 0 alone;
  // spread gives every node one prefill and three decode instances.
  const std::string groups =
      "instance_groups:\n"
      "  - {name: p, model: llama-3.1-8b, pool: p, tp: 2, replicas: 2, role: prefill}\n"
      "  - {name: d, model: llama-3.1-8b, pool: p, tp: 2, replicas: 6, role: decode}\n";
  const ClusterConfig packed =
      Load("node_pools: [{name: p, hardware: H100-SXM, nodes: 2}]\n" + groups);
  EXPECT_EQ(packed.placement[1].node, 0);
  EXPECT_EQ(packed.placement[2].node, 0);
  const ClusterConfig spread =
      Load("node_pools: [{name: p, hardware: H100-SXM, nodes: 2, placement: spread}]\n" + groups);
  EXPECT_TRUE(spread.pools[0].spread);
  EXPECT_FALSE(packed.pools[0].spread);
  ExpectPlacement(spread, {{0, 0, 0, 0, 0},
                           {0, 1, 0, 1, 0},
                           {1, 0, 0, 0, 2},
                           {1, 1, 0, 1, 2},
                           {1, 2, 0, 0, 4},
                           {1, 3, 0, 1, 4},
                           {1, 4, 0, 0, 6},
                           {1, 5, 0, 1, 6}});
  // Ties go to the lowest node; a node with less room but still enough is not preferred.
  const ClusterConfig mixed_tp = Load(
      "node_pools: [{name: p, hardware: H100-SXM, nodes: 2, placement: spread}]\n"
      "instance_groups:\n"
      "  - {name: big, model: llama-3.1-8b, pool: p, tp: 4, replicas: 1}\n"
      "  - {name: small, model: llama-3.1-8b, pool: p, tp: 1, replicas: 3}\n");
  ExpectPlacement(mixed_tp, {{0, 0, 0, 0, 0}, {1, 0, 0, 1, 0}, {1, 1, 0, 1, 1}, {1, 2, 0, 1, 2}});
}

TEST(ClusterConfig, DecodeScopeReadsFleetOrNode) {
  EXPECT_FALSE(Load(kTwoPools).gateways.decode_on_same_node);
  EXPECT_FALSE(Load(kTwoPools + "gateways: {decode_scope: fleet}\n").gateways.decode_on_same_node);
  EXPECT_TRUE(Load(kTwoPools + "gateways: {decode_scope: node}\n").gateways.decode_on_same_node);
}

TEST(ClusterConfigErrors, UnknownPlacementAndDecodeScope) {
  const InputError placement = LoadError(
      "node_pools: [{name: p, hardware: H100-SXM, nodes: 1, placement: packed}]\n"
      "instance_groups: [{name: a, model: llama-3.1-8b, pool: p}]\n",
      1, "node_pools[0].placement");
  EXPECT_TRUE(Mentions(placement, "first_fit, spread")) << placement.what();
  const InputError scope =
      LoadError(kTwoPools + "gateways:\n  decode_scope: rack\n", 7, "gateways.decode_scope");
  EXPECT_TRUE(Mentions(scope, "fleet, node")) << scope.what();
}

TEST(ClusterConfig, PoolsAreSharedAndNumberedInOrder) {
  const ClusterConfig c = Load(kTwoPools +
                               "  - {name: old, model: llama-3.1-8b, pool: a100, replicas: 2}\n"
                               "  - {name: more, model: llama-3.1-8b, pool: h100, tp: 4}\n");
  ExpectPlacement(c, {{0, 0, 0, 0, 0},
                      {0, 1, 0, 0, 1},
                      {0, 2, 0, 0, 2},
                      {0, 3, 0, 0, 3},
                      {1, 0, 1, 0, 0},
                      {1, 1, 1, 0, 1},
                      {2, 0, 0, 0, 4}});
  EXPECT_EQ(c.groups[1].hardware, "A100-SXM-80GB");
}

TEST(ClusterConfig, ImplicitPoolHasJustEnoughNodes) {
  // 9 replicas at TP 2 on 8-GPU nodes: 4 per node, 3 nodes.
  const ClusterConfig c = Load(
      "instance_groups:\n"
      "  - {name: solo, model: llama-3.1-8b, hardware: H100-SXM, tp: 2, replicas: 9}\n"
      "  - {name: tiny, model: llama-3.1-8b, hardware: RX-7900-XT, tp: 1, replicas: 1}\n");
  ASSERT_EQ(c.pools.size(), 2u);
  EXPECT_TRUE(c.pools[0].implicit);
  EXPECT_EQ(c.pools[0].name, "solo");
  EXPECT_EQ(c.pools[0].nodes, 3);
  EXPECT_EQ(c.pools[0].gpus_per_node, 8);
  EXPECT_EQ(c.pools[0].line, 2);
  EXPECT_EQ(c.pools[1].name, "tiny");
  EXPECT_EQ(c.pools[1].nodes, 1);
  EXPECT_EQ(c.pools[1].gpus_per_node, 4);
  EXPECT_EQ(c.groups[0].pool, "solo");
  ASSERT_EQ(c.placement.size(), 10u);
  EXPECT_EQ(c.placement[3].node, 0);
  EXPECT_EQ(c.placement[3].first_gpu, 6);
  EXPECT_EQ(c.placement[4].node, 1);
  EXPECT_EQ(c.placement[8].node, 2);
  EXPECT_EQ(c.placement[8].first_gpu, 0);
  EXPECT_EQ(c.placement[9].pool, 1);
}

TEST(ClusterConfig, DocsSmallExampleLoads) {
  // The second example of docs/CLUSTER_CONFIG.md.
  const ClusterConfig c = Load(
      "node_pools:\n"
      "  - {name: h200, hardware: H200-SXM, nodes: 2}\n"
      "instance_groups:\n"
      "  - {name: big, model: llama-3.1-70b, pool: h200, tp: 4, replicas: 2}\n"
      "  - {name: small, model: llama-3.1-8b, pool: h200, tp: 1, replicas: 8}\n"
      "  - {name: edge, model: llama-3.1-8b, hardware: RTX-4090, replicas: 3}\n"
      "gateways: {count: 1, policy: prefix_affinity, prefix_blocks: 2}\n"
      "latency: {gateway_to_instance_us: 200}\n");
  ASSERT_EQ(c.pools.size(), 2u);
  EXPECT_EQ(c.pools[1].nodes, 1);
  ASSERT_EQ(c.placement.size(), 13u);
  EXPECT_EQ(c.placement[1].first_gpu, 4);
  EXPECT_EQ(c.placement[2].node, 1);
  EXPECT_EQ(c.placement[9].node, 1);
  EXPECT_EQ(c.placement[9].first_gpu, 7);
  EXPECT_EQ(c.placement[12].pool, 1);
  EXPECT_EQ(c.placement[12].first_gpu, 2);
}

TEST(ClusterConfig, PoolAndHardwareThatAgreeAreAccepted) {
  const ClusterConfig c = Load(
      "node_pools: [{name: p, hardware: H100-SXM, nodes: 1}]\n"
      "instance_groups: [{name: g, model: llama-3.1-8b, pool: p, hardware: H100-SXM}]\n");
  EXPECT_EQ(c.pools.size(), 1u);
  EXPECT_EQ(c.groups[0].pool, "p");
}

// --- errors: each names file, line and key ---

TEST(ClusterConfigErrors, PoolOverCapacity) {
  const InputError e = LoadError(kTwoPools +
                                     "  - name: more\n"
                                     "    model: llama-3.1-8b\n"
                                     "    pool: h100\n"
                                     "    tp: 2\n"
                                     "    replicas: 7\n",
                                 10, "instance_groups[1].replicas");
  EXPECT_TRUE(Mentions(e, "'h100'")) << e.what();
  EXPECT_TRUE(Mentions(e, "2 nodes x 8 GPUs = 16")) << e.what();
  EXPECT_TRUE(Mentions(e, "ask for 18 GPUs")) << e.what();
}

TEST(ClusterConfigErrors, PoolFragmentedByFirstFit) {
  // Two 6-GPU nodes hold 12 GPUs, but only one TP 4 instance each.
  const InputError e = LoadError(
      "node_pools: [{name: p, hardware: H100-SXM, nodes: 2, gpus_per_node: 6}]\n"
      "instance_groups: [{name: g, model: llama-3.1-8b, pool: p, tp: 4, replicas: 3}]\n",
      2, "instance_groups[0].replicas");
  EXPECT_TRUE(Mentions(e, "ask for 12 GPUs")) << e.what();
  EXPECT_TRUE(Mentions(e, "first-fit")) << e.what();
}

TEST(ClusterConfigErrors, UnknownKeys) {
  LoadError(kTwoPools + "gateway: {count: 2}\n", 6, "gateway");
  LoadError(
      "node_pools:\n"
      "  - {name: p, hardware: H100-SXM, nodes: 1,\n"
      "     gpus: 8}\n"
      "instance_groups: [{name: g, model: llama-3.1-8b, pool: p}]\n",
      3, "node_pools[0].gpus");
  LoadError(kTwoPools + "gateways:\n  count: 2\n  staleness: 0.1\n", 8, "gateways.staleness");
  LoadError(kTwoPools + "latency: {gateway_to_instance_ms: 1}\n", 6,
            "latency.gateway_to_instance_ms");
  LoadError(kTwoPools + "timeseries: {period_s: 1}\n", 6, "timeseries.period_s");
  LoadError(kTwoPools + "slo: {ttft: 1}\n", 6, "slo.ttft");
  LoadError(kTwoPools + "  - {name: x, model: llama-3.1-8b, pools: h100}\n", 6,
            "instance_groups[1].pools");
}

TEST(ClusterConfigErrors, UnknownPoolListsThePools) {
  const InputError e =
      LoadError(kTwoPools + "  - name: x\n    model: llama-3.1-8b\n    pool: h200\n", 8,
                "instance_groups[1].pool");
  EXPECT_TRUE(Mentions(e, "'h200'")) << e.what();
  EXPECT_TRUE(Mentions(e, "h100, a100")) << e.what();
}

TEST(ClusterConfigErrors, ImplicitPoolsCannotBeNamed) {
  // `x` has an implicit pool; `y` may not name it.
  LoadError(
      "instance_groups:\n"
      "  - {name: x, model: llama-3.1-8b, hardware: H100-SXM}\n"
      "  - {name: y, model: llama-3.1-8b, pool: x}\n",
      3, "instance_groups[1].pool");
}

TEST(ClusterConfigErrors, UnknownPolicyListsThePolicies) {
  const InputError e =
      LoadError(kTwoPools + "gateways:\n  policy: fastest\n", 7, "gateways.policy");
  for (const std::string& name : RoutingPolicyNames())
    EXPECT_TRUE(Mentions(e, name)) << e.what();
}

TEST(ClusterConfig, PrefillDecodeExampleLoads) {
  const ClusterConfig config = LoadClusterConfig(ProjectFile("cluster_configs/pd_llama8b.yaml"));
  ASSERT_EQ(config.groups.size(), 2u);
  EXPECT_EQ(config.groups[0].role, InstanceRole::kPrefill);
  EXPECT_EQ(config.groups[1].role, InstanceRole::kDecode);
  EXPECT_TRUE(config.disaggregated());
  EXPECT_EQ(config.gateways.decode_policy, RoutingPolicy::kLeastKv);
  EXPECT_EQ(config.gateways.router.policy, RoutingPolicy::kLeastOutstanding);
  EXPECT_FALSE(Load(kTwoPools).disaggregated());
  EXPECT_EQ(Load(kTwoPools).groups[0].role, InstanceRole::kMixed);
}

TEST(ClusterConfigErrors, UnknownRoleAndDecodePolicy) {
  const InputError role = LoadError(
      "instance_groups:\n  - {name: p, model: llama-3.1-8b, hardware: H100-SXM, role: both}\n", 2,
      "instance_groups[0].role");
  EXPECT_TRUE(Mentions(role, "mixed, prefill, decode")) << role.what();
  const InputError policy =
      LoadError(kTwoPools + "gateways:\n  decode_policy: fastest\n", 7, "gateways.decode_policy");
  EXPECT_TRUE(Mentions(policy, "least_kv")) << policy.what();
}

TEST(ClusterConfigErrors, Latency) {
  LoadError(kTwoPools + "latency: {gateway_to_instance_us: 0}\n", 6,
            "latency.gateway_to_instance_us");
  LoadError(kTwoPools + "latency: {gateway_to_instance_us: -5}\n", 6,
            "latency.gateway_to_instance_us");
  LoadError(kTwoPools + "latency:\n  instance_to_client_us: -1\n", 7,
            "latency.instance_to_client_us");
}

TEST(ClusterConfigErrors, Staleness) {
  LoadError(kTwoPools + "gateways: {staleness_s: 0}\n", 6, "gateways.staleness_s");
  LoadError(kTwoPools + "gateways: {staleness_s: -0.1}\n", 6, "gateways.staleness_s");
  LoadError(kTwoPools + "gateways: {staleness_s: soon}\n", 6, "gateways.staleness_s");
}

TEST(ClusterConfigErrors, GatewayRanges) {
  LoadError(kTwoPools + "gateways: {count: 0}\n", 6, "gateways.count");
  LoadError(kTwoPools + "gateways: {prefix_blocks: 0}\n", 6, "gateways.prefix_blocks");
  LoadError(kTwoPools + "gateways: {virtual_nodes: 0}\n", 6, "gateways.virtual_nodes");
  LoadError(kTwoPools + "gateways: {overload_margin: -1}\n", 6, "gateways.overload_margin");
  LoadError(kTwoPools + "gateways: {overload_ratio: 0.9}\n", 6, "gateways.overload_ratio");
  LoadError(kTwoPools + "gateways: {capacity_weighted: maybe}\n", 6, "gateways.capacity_weighted");
  LoadError(kTwoPools + "timeseries: {interval_s: 0}\n", 6, "timeseries.interval_s");
  LoadError(kTwoPools + "slo: {ttft_s: 0}\n", 6, "slo.ttft_s");
}

TEST(ClusterConfigErrors, HardwareThatDisagreesWithThePool) {
  const InputError e = LoadError(kTwoPools +
                                     "  - name: x\n"
                                     "    model: llama-3.1-8b\n"
                                     "    pool: h100\n"
                                     "    hardware: A100-SXM-80GB\n",
                                 9, "instance_groups[1].hardware");
  EXPECT_TRUE(Mentions(e, "H100-SXM")) << e.what();
}

TEST(ClusterConfigErrors, GroupNeedsPoolOrHardware) {
  LoadError(kTwoPools + "  - {name: x, model: llama-3.1-8b}\n", 6, "instance_groups[1].pool");
}

TEST(ClusterConfigErrors, DuplicatePool) {
  const InputError e = LoadError(
      "node_pools:\n"
      "  - {name: p, hardware: H100-SXM, nodes: 1}\n"
      "  - name: p\n"
      "    hardware: H200-SXM\n"
      "    nodes: 1\n"
      "instance_groups: [{name: g, model: llama-3.1-8b, pool: p}]\n",
      3, "node_pools[1].name");
  EXPECT_TRUE(Mentions(e, "duplicate")) << e.what();
}

TEST(ClusterConfigErrors, ImplicitPoolNameClash) {
  LoadError(kTwoPools + "  - {name: a100, model: llama-3.1-8b, hardware: A100-SXM-80GB}\n", 6,
            "instance_groups[1].name");
}

TEST(ClusterConfigErrors, BadPools) {
  const InputError e = LoadError(
      "node_pools:\n"
      "  - {name: p, hardware: H800, nodes: 1}\n"
      "instance_groups: [{name: g, model: llama-3.1-8b, pool: p}]\n",
      2, "node_pools[0].hardware");
  EXPECT_TRUE(Mentions(e, "H100-SXM")) << e.what();  // lists the catalog
  LoadError(
      "node_pools:\n"
      "  - {name: p, hardware: H100-SXM}\n"
      "instance_groups: [{name: g, model: llama-3.1-8b, pool: p}]\n",
      2, "node_pools[0].nodes");
  LoadError(
      "node_pools:\n"
      "  - {name: p, hardware: H100-SXM, nodes: 0}\n"
      "instance_groups: [{name: g, model: llama-3.1-8b, pool: p}]\n",
      2, "node_pools[0].nodes");
  LoadError(
      "node_pools:\n"
      "  - {name: p, hardware: H100-SXM, nodes: 1, gpus_per_node: 0}\n"
      "instance_groups: [{name: g, model: llama-3.1-8b, pool: p}]\n",
      2, "node_pools[0].gpus_per_node");
  LoadError("node_pools: {name: p}\ninstance_groups: [{name: g, model: m, hardware: H100-SXM}]\n",
            1, "node_pools");
}

TEST(ClusterConfigErrors, TpMustFitANode) {
  LoadError(kTwoPools + "  - {name: x, model: llama-3.1-8b, pool: a100, tp: 16}\n", 6,
            "instance_groups[1].tp");
  LoadError(kTwoPools + "  - {name: x, model: llama-3.1-8b, hardware: H100-SXM, tp: 0}\n", 6,
            "instance_groups[1].tp");
  LoadError(kTwoPools + "  - {name: x, model: llama-3.1-8b, hardware: RX-7900-XT, tp: 8}\n", 6,
            "instance_groups[1].tp");
}

TEST(ClusterConfigErrors, NoGroups) {
  LoadError("name: empty\n", 1, "instance_groups");
  LoadError("name: empty\ninstance_groups: []\n", 2, "instance_groups");
}

// --- routing policy names ---

TEST(RoutingPolicy, NamesRoundTrip) {
  const std::vector<std::string> names = RoutingPolicyNames();
  EXPECT_EQ(names, (std::vector<std::string>{"round_robin", "random", "least_outstanding",
                                             "least_kv", "power_of_two", "prefix_affinity"}));
  for (const std::string& name : names) {
    const std::optional<RoutingPolicy> policy = ParseRoutingPolicy(name);
    ASSERT_TRUE(policy.has_value()) << name;
    EXPECT_EQ(RoutingPolicyName(*policy), name);
  }
  EXPECT_EQ(ParseRoutingPolicy("Round_Robin"), std::nullopt);
  EXPECT_EQ(ParseRoutingPolicy(""), std::nullopt);
  EXPECT_EQ(ParseRoutingPolicy("round_robin"), RoutingPolicy::kRoundRobin);
  EXPECT_EQ(ParseRoutingPolicy("power_of_two"), RoutingPolicy::kPowerOfTwo);
}

// Issue 22: a latency past the largest simulated time failed only after the whole run
// (QuantileSketch::Add: value must be >= 0); a bundle name too long for the file system
// was an internal filesystem error.
TEST(ClusterConfig, TimesPastTheLargestSimulatedTimeAreRefused) {
  const InputError e = LoadError(kTwoPools + "latency: {instance_to_client_us: 1e16}\n", 6,
                                 "latency.instance_to_client_us");
  EXPECT_TRUE(Mentions(e, "must be in [0, 1e+15]")) << e.what();
  LoadError(kTwoPools + "latency:\n  gateway_to_instance_us: 1e16\n", 7,
            "latency.gateway_to_instance_us");
  LoadError(kTwoPools + "slo:\n  ttft_s: 1e10\n", 7, "slo.ttft_s");
  LoadError(kTwoPools + "gateways:\n  staleness_s: 1e10\n", 7, "gateways.staleness_s");
  LoadError(kTwoPools + "timeseries:\n  interval_s: 1e10\n", 7, "timeseries.interval_s");
}

TEST(ClusterConfig, ABundleNameTooLongForTheFileSystemIsALocatedError) {
  const InputError e = LoadError(
      "instance_groups:\n  - {name: g, model: llama-3.1-8b, hardware: H100-SXM, bundle: " +
          std::string(300, 'b') + "}\n",
      2, "instance_groups[0].bundle");
  EXPECT_TRUE(Mentions(e, "no performance bundle")) << e.what();
  EXPECT_LT(std::string(e.what()).size(), 400u) << e.what();
}

TEST(ClusterConfig, AGroupMayNameTheModelItServes) {
  const ClusterConfig c = Load(
      "instance_groups:\n"
      "  - {name: a, model: llama-3.1-8b, hardware: H100-SXM, served_model_name: chat}\n"
      "  - {name: b, model: llama-3.1-8b, hardware: H100-SXM}\n");
  EXPECT_EQ(c.groups[0].served_model_name, "chat");
  EXPECT_EQ(c.groups[0].LineOf("served_model_name"), 2);
  EXPECT_EQ(c.groups[1].served_model_name, "");  // the model card's name, once built
}

TEST(ClusterConfigErrors, ServedModelNames) {
  const std::string group =
      "instance_groups:\n  - {name: a, model: llama-3.1-8b, hardware: H100-SXM, ";
  LoadError(group + "served_model_name: ''}\n", 2, "instance_groups[0].served_model_name");
  // 26 bytes: "model:" and the name no longer fit a /summary row's 32.
  const InputError e = LoadError(group + "served_model_name: " + std::string(26, 'n') + "}\n", 2,
                                 "instance_groups[0].served_model_name");
  EXPECT_TRUE(Mentions(e, "longer than 25 bytes")) << e.what();
  LoadError(group + "served_model_name: " + std::string(25, 'n') + ", tp: 0}\n", 2,
            "instance_groups[0].tp");  // 25 bytes pass; the next error is the TP's
}

TEST(RoutingPolicy, OnlyRoundRobinAndRandomReadNoLoad) {
  for (const std::string& name : RoutingPolicyNames()) {
    const RoutingPolicy policy = *ParseRoutingPolicy(name);
    EXPECT_EQ(UsesLoad(policy), name != "round_robin" && name != "random") << name;
  }
}

// Issue 22, fuzz finding fuzz/findings/cluster_config/: a hardware or model name longer
// than a file name may be threw std::filesystem::filesystem_error out of the catalog lookup.
TEST(ClusterConfig, AHardwareNameTooLongForTheFileSystemIsALocatedError) {
  const std::string findings = std::string(FLEETSIM_SOURCE_DIR) + "/fuzz/findings/cluster_config/";
  const InputError e =
      CatchInputError([&] { LoadClusterConfig(findings + "hardware_name_too_long.yaml"); });
  EXPECT_EQ(e.line(), 2) << e.what();
  EXPECT_EQ(e.field(), "node_pools[0].hardware") << e.what();
  EXPECT_TRUE(Mentions(e, "unknown hardware 'xxxx")) << e.what();
  EXPECT_LT(std::string(e.what()).size(), 600u) << e.what();  // the name is quoted cut short
  // The finding as the fuzzer found it.
  EXPECT_THROW(LoadClusterConfig(findings + "fuzzed_default_fleet.yaml"), InputError);
}

}  // namespace
}  // namespace fleetsim
