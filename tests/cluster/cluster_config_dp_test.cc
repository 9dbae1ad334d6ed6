// Data parallelism with expert parallelism in cluster configs: `dp` and
// `enable_expert_parallel` per group, their refusals (each located at its line), and the
// placement of an instance's DP x TP GPUs inside one node.
#include <string>

#include <gtest/gtest.h>

#include "cluster/cluster_config.h"
#include "cluster/cluster_test_support.h"
#include "core/input_error.h"
#include "support/input_error.h"
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

// Lines 1-3: one pool of 8-GPU nodes; groups from line 4.
const std::string kPool =
    "node_pools:\n"
    "  - {name: pro, hardware: RTX-PRO-6000, nodes: 1}\n"
    "instance_groups:\n";

TEST(ClusterConfigDp, TheExampleLoadsWithTwoGpusAnInstance) {
  const ClusterConfig config = LoadClusterConfig(ProjectFile("cluster_configs/moe_dp_ep.yaml"));
  ASSERT_EQ(config.groups.size(), 2u);
  EXPECT_EQ(config.groups[0].dp, 1);
  EXPECT_FALSE(config.groups[0].enable_expert_parallel);
  EXPECT_EQ(config.groups[0].GpusPerInstance(), 2);  // TP 2
  EXPECT_EQ(config.groups[1].dp, 2);
  EXPECT_TRUE(config.groups[1].enable_expert_parallel);
  EXPECT_EQ(config.groups[1].engine.tensor_parallel_size, 1);
  EXPECT_EQ(config.groups[1].GpusPerInstance(), 2);  // DP 2 x TP 1
  // First fit on one 8-GPU node: GPUs 0-1, 2-3 (TP 2), then 4-5, 6-7 (DP 2).
  ASSERT_EQ(config.placement.size(), 4u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(config.placement[static_cast<std::size_t>(i)].node, 0);
    EXPECT_EQ(config.placement[static_cast<std::size_t>(i)].first_gpu, 2 * i);
  }
}

TEST(ClusterConfigDp, DpTimesTpIsPlacedInsideANode) {
  // DP 2 x TP 2 = 4 GPUs: two instances fill the node; a third does not fit.
  const ClusterConfig two = Load(kPool +
                                 "  - {name: m, model: qwen3-30b-a3b, pool: pro, tp: 2, dp: 2,"
                                 " enable_expert_parallel: true, replicas: 2}\n");
  EXPECT_EQ(two.placement[1].first_gpu, 4);
  const InputError full = LoadError(kPool +
                                        "  - {name: m, model: qwen3-30b-a3b, pool: pro, tp: 2, "
                                        "dp: 2, enable_expert_parallel: true, replicas: 3}\n",
                                    4, "instance_groups[0].replicas");
  EXPECT_TRUE(Mentions(full, "3 x DP 2 x TP 2")) << full.what();
  EXPECT_TRUE(Mentions(full, "12 GPUs")) << full.what();
  // DP 4 x TP 4 = 16 GPUs exceed a node: refused at dp, never spread over nodes.
  const InputError wide = LoadError(kPool +
                                        "  - name: m\n"
                                        "    model: qwen3-30b-a3b\n"
                                        "    pool: pro\n"
                                        "    tp: 4\n"
                                        "    dp: 4\n"
                                        "    enable_expert_parallel: true\n",
                                    8, "instance_groups[0].dp");
  EXPECT_TRUE(Mentions(wide, "DP 4 x TP 4 = 16 GPUs exceed the 8 GPUs of one")) << wide.what();
  // An implicit pool is sized in DP x TP GPUs: 3 instances of 4 GPUs on 8-GPU nodes.
  const ClusterConfig implicit = Load(
      "instance_groups:\n"
      "  - {name: m, model: qwen3-30b-a3b, hardware: H100-SXM, dp: 4,"
      " enable_expert_parallel: true, replicas: 3}\n");
  EXPECT_EQ(implicit.pools.back().nodes, 2);
  EXPECT_EQ(implicit.placement[2].node, 1);
}

TEST(ClusterConfigDpErrors, EachRuleAtItsLine) {
  // dp without expert parallelism: vLLM's dense DP ranks are independent engines.
  const InputError no_ep = LoadError(kPool +
                                         "  - name: m\n"
                                         "    model: qwen3-30b-a3b\n"
                                         "    pool: pro\n"
                                         "    dp: 2\n",
                                     7, "instance_groups[0].dp");
  EXPECT_TRUE(Mentions(no_ep, "enable_expert_parallel: true")) << no_ep.what();
  EXPECT_TRUE(Mentions(no_ep, "replicas")) << no_ep.what();
  // expert parallelism without dp.
  LoadError(kPool +
                "  - name: m\n"
                "    model: qwen3-30b-a3b\n"
                "    pool: pro\n"
                "    tp: 2\n"
                "    enable_expert_parallel: true\n",
            8, "instance_groups[0].enable_expert_parallel");
  // Ranges and types.
  LoadError(kPool + "  - {name: m, model: qwen3-30b-a3b, pool: pro, dp: 0}\n", 4,
            "instance_groups[0].dp");
  LoadError(kPool + "  - {name: m, model: qwen3-30b-a3b, pool: pro, dp: two}\n", 4,
            "instance_groups[0].dp");
  LoadError(kPool +
                "  - {name: m, model: qwen3-30b-a3b, pool: pro, dp: 2, "
                "enable_expert_parallel: maybe}\n",
            4, "instance_groups[0].enable_expert_parallel");
  // Prefill/decode roles run dp: 1.
  const InputError role = LoadError(kPool +
                                        "  - name: m\n"
                                        "    model: qwen3-30b-a3b\n"
                                        "    pool: pro\n"
                                        "    role: prefill\n"
                                        "    dp: 2\n"
                                        "    enable_expert_parallel: true\n",
                                    8, "instance_groups[0].dp");
  EXPECT_TRUE(Mentions(role, "prefill")) << role.what();
  // One spelling only.
  LoadError(kPool + "  - {name: m, model: qwen3-30b-a3b, pool: pro, data_parallel_size: 2}\n", 4,
            "instance_groups[0].data_parallel_size");
}

}  // namespace
}  // namespace fleetsim
