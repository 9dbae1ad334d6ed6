// Points of a sweep: the cartesian product in the fixed axis order, gpu_budget replicas and
// skips, and each point's generated cluster config (values applied, nodes grown, paths
// absolute) loading as the cluster config it claims to be.
#include "sweep/sweep_points.h"

#include <gtest/gtest.h>

#include "cluster/cluster_config.h"
#include "core/input_error.h"
#include "perf/synthetic_bundle.h"
#include "support/input_error.h"
#include "sweep/point_config.h"
#include "sweep/sweep_fixture.h"

namespace fleetsim {
namespace {

using testing::SweepDir;

std::vector<std::string> Describe(const SweepPoints& sweep) {
  std::vector<std::string> out;
  for (const SweepPoint& p : sweep.points)
    out.push_back(std::to_string(p.index) + ": " + DescribePoint(p));
  return out;
}

TEST(SweepPoints, CartesianProductLastAxisFastestInFixedKeyOrder) {
  SweepDir dir("points-order");
  // Written in another order than the product's: the product's order wins.
  const SweepSpec spec = LoadSweepSpec(dir.Write("s.yaml",
                                                 "base: cluster.yaml\nworkload: traffic.yaml\n"
                                                 "axes:\n  policy: [random, least_kv]\n"
                                                 "  rate_scale: [2]\n"
                                                 "  enable_prefix_caching: [true, false]\n"
                                                 "  tp: [1, 2]\n"));
  EXPECT_EQ(Describe(ExpandPoints(spec)),
            (std::vector<std::string>{
                "0: tp=1 prefix_caching=true policy=random rate_scale=2",
                "1: tp=1 prefix_caching=true policy=least_kv rate_scale=2",
                "2: tp=1 prefix_caching=false policy=random rate_scale=2",
                "3: tp=1 prefix_caching=false policy=least_kv rate_scale=2",
                "4: tp=2 prefix_caching=true policy=random rate_scale=2",
                "5: tp=2 prefix_caching=true policy=least_kv rate_scale=2",
                "6: tp=2 prefix_caching=false policy=random rate_scale=2",
                "7: tp=2 prefix_caching=false policy=least_kv rate_scale=2",
            }));
}

// Prefill/decode disaggregation: the GPU budget split P:D between the prefill and the
// decode group; colocated serving once (the decode axes do not apply to it), on the
// prefill group alone, made mixed.
TEST(SweepPoints, PrefillDecodeSplitsTheBudgetAndColocatedRunsOnce) {
  SweepDir dir("points-pd");
  dir.Write("pd.yaml", R"(node_pools:
  - {name: gpus, hardware: H100-SXM, nodes: 2}
instance_groups:
  - {name: p, role: prefill, model: llama-3.1-8b, pool: gpus, tp: 1, replicas: 2}
  - {name: d, role: decode, model: llama-3.1-8b, pool: gpus, tp: 2, replicas: 2}
)");
  const SweepSpec spec = LoadSweepSpec(dir.Write(
      "s.yaml",
      "base: pd.yaml\ngroup: p\ndecode_group: d\nworkload: traffic.yaml\ngpu_budget: 16\n"
      "axes:\n  tp: [2]\n  serving: [colocated, disaggregated]\n  pd_split: ['1:1', '1:3', "
      "'1:2']\n  decode_tp: [4]\n"));
  const SweepPoints sweep = ExpandPoints(spec);
  // 16 GPUs: colocated 8 x TP 2; 1:1 = 8 prefill GPUs (4 x TP 2) and 8 decode (2 x TP 4);
  // 1:3 = 4 (2 x TP 2) and 12 (3 x TP 4); 1:2 does not split 16.
  EXPECT_EQ(Describe(sweep),
            (std::vector<std::string>{
                "0: tp=2 replicas=8 serving=colocated",
                "1: tp=2 replicas=4 serving=disaggregated pd_split=1:1 decode_tp=4 "
                "decode_replicas=2",
                "2: tp=2 replicas=2 serving=disaggregated pd_split=1:3 decode_tp=4 "
                "decode_replicas=3",
            }));
  ASSERT_EQ(sweep.skipped.size(), 3u);
  EXPECT_NE(sweep.skipped[0].find("colocated serving has no decode group"), std::string::npos);
  EXPECT_NE(sweep.skipped[2].find("split 1:2 is not whole instances"), std::string::npos);

  // The colocated point's config: one mixed group of 8; the split one's: both groups.
  const ClusterConfig colocated = [&] {
    const std::string path = dir.Write("p0.yaml", PointConfigYaml(spec, sweep.points[0]));
    return LoadClusterConfig(path);
  }();
  ASSERT_EQ(colocated.groups.size(), 1u);
  EXPECT_EQ(colocated.groups[0].role, InstanceRole::kMixed);
  EXPECT_EQ(colocated.groups[0].replicas, 8);
  const ClusterConfig split = [&] {
    const std::string path = dir.Write("p2.yaml", PointConfigYaml(spec, sweep.points[2]));
    return LoadClusterConfig(path);
  }();
  ASSERT_EQ(split.groups.size(), 2u);
  EXPECT_EQ(split.groups[0].role, InstanceRole::kPrefill);
  EXPECT_EQ(split.groups[0].replicas, 2);
  EXPECT_EQ(split.groups[1].role, InstanceRole::kDecode);
  EXPECT_EQ(split.groups[1].replicas, 3);
  EXPECT_EQ(split.groups[1].engine.tensor_parallel_size, 4);
}

TEST(SweepPoints, NoAxesIsOneBasePoint) {
  SweepDir dir("points-base");
  const SweepSpec spec =
      LoadSweepSpec(dir.Write("s.yaml", "base: cluster.yaml\nworkload: traffic.yaml\n"));
  const SweepPoints sweep = ExpandPoints(spec);
  ASSERT_EQ(sweep.points.size(), 1u);
  EXPECT_EQ(DescribePoint(sweep.points[0]), "base");
  EXPECT_EQ(sweep.points[0].RateScale(), 1.0);
}

TEST(SweepPoints, GpuBudgetGivesReplicasAndSkipsTpThatDoesNotDivideIt) {
  SweepDir dir("points-budget");
  const SweepSpec spec =
      LoadSweepSpec(dir.Write("s.yaml",
                              "base: cluster.yaml\nworkload: traffic.yaml\ngpu_budget: 6\n"
                              "axes: {tp: [1, 4, 2, 3], max_num_seqs: [32, 64]}\n"));
  const SweepPoints sweep = ExpandPoints(spec);
  EXPECT_EQ(Describe(sweep), (std::vector<std::string>{
                                 "0: tp=1 replicas=6 max_num_seqs=32",
                                 "1: tp=1 replicas=6 max_num_seqs=64",
                                 "2: tp=2 replicas=3 max_num_seqs=32",
                                 "3: tp=2 replicas=3 max_num_seqs=64",
                                 "4: tp=3 replicas=2 max_num_seqs=32",
                                 "5: tp=3 replicas=2 max_num_seqs=64",
                             }));
  ASSERT_EQ(sweep.skipped.size(), 2u);
  EXPECT_EQ(sweep.skipped[0], "tp=4 max_num_seqs=32: gpu_budget 6 is not a multiple of TP 4");
  EXPECT_EQ(sweep.skipped[1], "tp=4 max_num_seqs=64: gpu_budget 6 is not a multiple of TP 4");

  // Without a tp axis the base's TP divides the budget.
  const SweepSpec no_tp = LoadSweepSpec(
      dir.Write("t.yaml", "base: cluster.yaml\nworkload: traffic.yaml\ngpu_budget: 5\n"));
  EXPECT_EQ(Describe(ExpandPoints(no_tp)), (std::vector<std::string>{"0: replicas=5"}));
}

TEST(SweepPoints, OutputPaths) {
  SweepDir dir("points-paths");
  const SweepSpec spec = LoadSweepSpec(dir.Write(
      "studies/s.yaml", "name: study\nbase: ../cluster.yaml\nworkload: ../traffic.yaml\n"));
  EXPECT_EQ(DefaultOutputDir(spec), std::filesystem::absolute(dir.dir() / "studies/out/study"));
  EXPECT_EQ(PointConfigPath("o", 3), std::filesystem::path("o/points/point-3.yaml"));
  EXPECT_EQ(PointResultPath("o", 3), std::filesystem::path("o/points/point-3.h5"));
}

// Every axis lands where it belongs; the pool grows to hold 12 x TP 2 on 8-GPU nodes
// (3 nodes), and the point's file loads from another folder.
TEST(PointConfig, AppliesEveryAxisGrowsThePoolAndLoads) {
  SweepDir dir("points-config");
  testing::SyntheticBundle bundle;
  testing::WriteDenseBundle(bundle);
  std::filesystem::create_directories(dir.dir() / "base");
  std::filesystem::copy(bundle.dir(), dir.dir() / "base/my_bundle",
                        std::filesystem::copy_options::recursive);
  dir.Write("base/fleet.yaml",
            "node_pools:\n  - {name: gpus, hardware: H100-SXM, nodes: 1}\n"
            "instance_groups:\n"
            "  - {name: other, model: llama-3.1-8b, pool: gpus, replicas: 3}\n"
            "  - {name: llama, model: llama-3.1-8b, pool: gpus, bundle: my_bundle}\n");
  const SweepSpec spec = LoadSweepSpec(dir.Write(
      "s.yaml",
      "base: base/fleet.yaml\ngroup: llama\nworkload: traffic.yaml\ngpu_budget: 24\n"
      "axes:\n  tp: [2]\n  enable_prefix_caching: [false]\n  max_num_batched_tokens: [4096]\n"
      "  max_num_seqs: [96]\n  block_size: [32]\n  policy: [prefix_affinity]\n"
      "  capacity_weighted: [true]\n"
      "  hardware: [A100-SXM-80GB]\n"));
  const SweepPoint point = ExpandPoints(spec).points.at(0);
  const std::filesystem::path file = dir.dir() / "elsewhere/point-0.yaml";
  std::filesystem::create_directories(file.parent_path());
  WritePointConfig(spec, point, file);
  const std::string text = testing::ReadText(file);
  EXPECT_NE(text.find("# Point 0 of sweep 's': tp=2 replicas=12"), std::string::npos) << text;

  const ClusterConfig c = LoadClusterConfig(file.string());
  ASSERT_EQ(c.groups.size(), 2u);
  const InstanceGroupConfig& g = c.groups[1];
  EXPECT_EQ(g.name, "llama");
  EXPECT_EQ(g.engine.tensor_parallel_size, 2);
  EXPECT_EQ(g.replicas, 12);
  EXPECT_EQ(g.engine.enable_prefix_caching, false);
  EXPECT_EQ(g.engine.max_num_batched_tokens, 4096);
  EXPECT_EQ(g.engine.max_num_seqs, 96);
  EXPECT_EQ(g.engine.block_size, 32);
  EXPECT_EQ(g.hardware, "A100-SXM-80GB");
  EXPECT_EQ(g.bundle, (dir.dir() / "base/my_bundle").lexically_normal().string());
  EXPECT_EQ(c.groups[0].hardware, "A100-SXM-80GB");  // the pool is shared
  EXPECT_EQ(c.gateways.router.policy, RoutingPolicy::kPrefixAffinity);
  EXPECT_TRUE(c.gateways.router.capacity_weighted);
  ASSERT_EQ(c.pools.size(), 1u);
  // First fit: 3 x TP 1 of "other", then 12 x TP 2: node 0 holds 3 + 2 x 2 (one GPU
  // left), nodes 1-2 hold 4 instances each, node 3 the last 2 -> 4 nodes.
  EXPECT_EQ(c.pools[0].nodes, 4);
  EXPECT_EQ(c.TotalInstances(), 15);
}

// A group on an implicit pool (hardware: only) takes the hardware axis itself; the loader
// sizes its pool.
TEST(PointConfig, ImplicitPoolTakesTheHardware) {
  SweepDir dir("points-implicit");
  dir.Write("implicit.yaml",
            "instance_groups:\n  - {name: llama, model: llama-3.1-8b, hardware: H100-SXM}\n");
  const SweepSpec spec =
      LoadSweepSpec(dir.Write("s.yaml",
                              "base: implicit.yaml\nworkload: traffic.yaml\ngpu_budget: 16\n"
                              "axes: {hardware: [A100-SXM-80GB]}\n"));
  const std::filesystem::path file = dir.dir() / "p.yaml";
  WritePointConfig(spec, ExpandPoints(spec).points.at(0), file);
  const ClusterConfig c = LoadClusterConfig(file.string());
  EXPECT_EQ(c.groups[0].hardware, "A100-SXM-80GB");
  EXPECT_EQ(c.groups[0].replicas, 16);
  EXPECT_EQ(c.pools[0].nodes, 2);
}

// Data parallelism: the budget counts TP x DP per instance; a point whose TP x DP does not
// divide it or does not fit a node is skipped; the point's config gets dp and expert
// parallelism (on only with dp > 1) and its pool grows in TP x DP GPUs.
TEST(SweepPoints, DpAxisCountsTpTimesDpInTheBudgetAndTheNode) {
  SweepDir dir("points-dp");
  dir.Write("moe.yaml",
            "node_pools:\n  - {name: pro, hardware: RTX-PRO-6000, nodes: 1}\n"
            "instance_groups:\n  - {name: moe, model: qwen3-30b-a3b, pool: pro, tp: 1}\n");
  const SweepSpec spec =
      LoadSweepSpec(dir.Write("s.yaml",
                              "base: moe.yaml\nworkload: traffic.yaml\n"
                              "gpu_budget: 16\naxes: {tp: [1, 8], dp: [1, 2]}\n"));
  const SweepPoints sweep = ExpandPoints(spec);
  EXPECT_EQ(Describe(sweep), (std::vector<std::string>{
                                 "0: tp=1 dp=1 replicas=16",
                                 "1: tp=1 dp=2 replicas=8",
                                 "2: tp=8 dp=1 replicas=2",
                             }));
  ASSERT_EQ(sweep.skipped.size(), 1u);
  EXPECT_EQ(sweep.skipped[0],
            "tp=8 dp=2: DP 2 x TP 8 = 16 GPUs exceed one node's 8 (an instance stays inside a "
            "node)");
  const std::filesystem::path file = dir.dir() / "p.yaml";
  WritePointConfig(spec, sweep.points.at(1), file);
  const ClusterConfig dp = LoadClusterConfig(file.string());
  EXPECT_EQ(dp.groups[0].dp, 2);
  EXPECT_TRUE(dp.groups[0].enable_expert_parallel);
  EXPECT_EQ(dp.groups[0].replicas, 8);
  EXPECT_EQ(dp.pools[0].nodes, 2);  // 8 instances of 2 GPUs on 8-GPU nodes
  WritePointConfig(spec, sweep.points.at(0), file);
  EXPECT_FALSE(LoadClusterConfig(file.string()).groups[0].enable_expert_parallel);

  // A budget that DP x TP does not divide.
  const SweepSpec odd = LoadSweepSpec(dir.Write(
      "t.yaml", "base: moe.yaml\nworkload: traffic.yaml\ngpu_budget: 6\naxes: {dp: [4]}\n"));
  ASSERT_EQ(ExpandPoints(odd).skipped.size(), 1u);
  EXPECT_EQ(ExpandPoints(odd).skipped[0], "dp=4: gpu_budget 6 is not a multiple of DP 4 x TP 1");
}

// dp > 1 is refused at its value for a model without MoE layers.
TEST(SweepPoints, DpAxisNeedsAMoeModel) {
  SweepDir dir("points-dp-dense");
  const InputError e = testing::CatchInputError([&] {
    LoadSweepSpec(
        dir.Write("s.yaml", "base: cluster.yaml\nworkload: traffic.yaml\naxes:\n  dp: [1, 2]\n"));
  });
  EXPECT_EQ(e.line(), 4) << e.what();
  EXPECT_EQ(e.field(), "axes.dp[1]") << e.what();
  EXPECT_NE(std::string(e.what()).find("no MoE layers"), std::string::npos) << e.what();
}

}  // namespace
}  // namespace fleetsim
