// Sweep specs: a full spec read back; every refusal names file:line:key.
#include "sweep/sweep_spec.h"

#include <gtest/gtest.h>

#include "support/input_error.h"
#include "sweep/sweep_fixture.h"

namespace fleetsim {
namespace {

using testing::CatchInputError;
using testing::SweepDir;

TEST(SweepSpec, ReadsEveryKey) {
  SweepDir dir("spec-full");
  const std::string spec = dir.Write("studies/full.yaml", R"(name: full
base: ../cluster.yaml
group: llama
workload: ../traffic.yaml
format: auto
window: {duration_s: 30, num_requests: 150}
seed: 7
gpu_budget: 8
axes:
  tp: [1, 2, 4]
  enable_prefix_caching: [true, false]
  max_num_batched_tokens: [2048, 8192]
  max_num_seqs: [64]
  policy: [least_outstanding, prefix_affinity]
  capacity_weighted: [false, true]
  hardware: [H100-SXM, A100-SXM-80GB]
  rate_scale: [1, 2.5]
objective:
  kind: goodput_per_dollar
)");
  const SweepSpec s = LoadSweepSpec(spec);
  EXPECT_EQ(s.name, "full");
  EXPECT_EQ(s.base, std::filesystem::weakly_canonical(dir.Path("cluster.yaml")).string());
  EXPECT_EQ(s.workload, std::filesystem::weakly_canonical(dir.Path("traffic.yaml")).string());
  EXPECT_EQ(s.group, "llama");
  EXPECT_EQ(s.base_tp, 1);
  EXPECT_EQ(s.base_replicas, 2);
  EXPECT_EQ(s.duration_s, 30.0);
  EXPECT_EQ(s.num_requests, 150);
  EXPECT_EQ(s.seed, 7u);
  EXPECT_EQ(s.gpu_budget, 8);
  EXPECT_EQ(s.axes.tp, (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(s.axes.enable_prefix_caching, (std::vector<bool>{true, false}));
  EXPECT_EQ(s.axes.max_num_batched_tokens, (std::vector<int>{2048, 8192}));
  EXPECT_EQ(s.axes.max_num_seqs, (std::vector<int>{64}));
  EXPECT_EQ(s.axes.policy, (std::vector<std::string>{"least_outstanding", "prefix_affinity"}));
  EXPECT_EQ(s.axes.capacity_weighted, (std::vector<bool>{false, true}));
  EXPECT_EQ(s.axes.hardware, (std::vector<std::string>{"H100-SXM", "A100-SXM-80GB"}));
  EXPECT_EQ(s.axes.rate_scale, (std::vector<double>{1, 2.5}));
  EXPECT_EQ(s.objective, SweepObjective::kGoodputPerDollar);
}

TEST(SweepSpec, DefaultsAndMaxRate) {
  SweepDir dir("spec-defaults");
  const std::string spec = dir.Write("capacity.yaml",
                                     "base: cluster.yaml\nworkload: traffic.yaml\n"
                                     "objective:\n  kind: max_rate\n  attainment_target: 0.95\n"
                                     "  rate_scale: {low: 0.5, high: 8, iterations: 3}\n");
  const SweepSpec s = LoadSweepSpec(spec);
  EXPECT_EQ(s.name, "capacity");  // the file's stem
  EXPECT_EQ(s.group, "llama");    // the only group
  EXPECT_EQ(s.seed, 0u);
  EXPECT_FALSE(s.gpu_budget);
  EXPECT_TRUE(s.axes.tp.empty());
  EXPECT_EQ(s.objective, SweepObjective::kMaxRate);
  EXPECT_EQ(s.rate_search.attainment_target, 0.95);
  EXPECT_EQ(s.rate_search.low, 0.5);
  EXPECT_EQ(s.rate_search.high, 8);
  EXPECT_EQ(s.rate_search.iterations, 3);

  const SweepSpec plain =
      LoadSweepSpec(dir.Write("plain.yaml", "base: cluster.yaml\nworkload: traffic.yaml\n"));
  EXPECT_EQ(plain.objective, SweepObjective::kGoodputPerGpu);
}

// Each spec body follows "base: cluster.yaml\nworkload: traffic.yaml\n" (lines 1-2).
TEST(SweepSpec, EveryErrorNamesFileLineAndKey) {
  SweepDir dir("spec-errors");
  dir.Write("two_groups.yaml",
            "node_pools: [{name: p, hardware: H100-SXM, nodes: 2}]\n"
            "instance_groups:\n  - {name: a, model: llama-3.1-8b, pool: p}\n"
            "  - {name: b, model: llama-3.1-8b, pool: p}\n");
  dir.Write("broken_base.yaml", "instance_groups:\n  - {name: a, model: llama-3.1-8b}\n");
  struct Case {
    std::string body;
    std::string mention;
  };
  const Case cases[] = {
      {"colour: blue\n", "s.yaml:3: colour: unknown key"},
      {"axes:\n  color: [1]\n", "s.yaml:4: axes.color: unknown key"},
      {"objective: {kind: goodput_per_gpu, target: 1}\n",
       "s.yaml:3: objective.target: unknown key"},
      {"window: {requests: 3}\n", "s.yaml:3: window.requests: unknown key"},
      {"group: nope\n", "s.yaml:3: group: no instance group 'nope'"},
      {"axes: {tp: [0]}\n", "s.yaml:3: axes.tp[0]: must be at least 1"},
      {"axes:\n  tp: [1,\n       16]\n",
       "s.yaml:5: axes.tp[1]: TP 16 exceeds the 8 GPUs of one H100-SXM"},
      {"axes: {tp: [two]}\n", "s.yaml:3: axes.tp[0]: expected an integer, got 'two'"},
      {"axes: {tp: [1, 2, 1]}\n", "s.yaml:3: axes.tp[2]: duplicate value '1'"},
      {"axes: {tp: []}\n", "s.yaml:3: axes.tp: needs at least one value"},
      {"axes: {tp: 2}\n", "s.yaml:3: axes.tp: expected a list"},
      {"axes: {max_num_seqs: [-4]}\n", "s.yaml:3: axes.max_num_seqs[0]: must be at least 1"},
      {"axes: {max_num_batched_tokens: [0]}\n",
       "s.yaml:3: axes.max_num_batched_tokens[0]: must be at least 1"},
      {"axes: {enable_prefix_caching: [maybe]}\n",
       "s.yaml:3: axes.enable_prefix_caching[0]: expected true or false"},
      {"axes: {capacity_weighted: [1.5]}\n", "s.yaml:3: axes.capacity_weighted[0]: expected true"},
      {"axes: {policy: [fastest]}\n", "s.yaml:3: axes.policy[0]: unknown routing policy 'fastest'"},
      {"axes: {hardware: [TPU-v9]}\n", "s.yaml:3: axes.hardware[0]: unknown hardware 'TPU-v9'"},
      {"axes: {pd_split: ['1:1']}\n", "s.yaml:3: axes.pd_split: needs decode_group"},
      {"axes: {serving: [colocated]}\n", "s.yaml:3: axes.serving: needs decode_group"},
      {"decode_group: a\n", "s.yaml:3: decode_group: no decode group 'a'"},
      {"axes: {rate_scale: [1, 0]}\n", "s.yaml:3: axes.rate_scale[1]: must be a positive number"},
      {"axes: {rate_scale: [1]}\nobjective: {kind: max_rate}\n",
       "s.yaml:3: axes.rate_scale: not with objective max_rate"},
      {"objective: {kind: fastest}\n", "s.yaml:3: objective.kind: unknown objective 'fastest'"},
      {"objective: {}\n", "objective.kind: missing required field"},
      {"objective: {kind: goodput_per_gpu, attainment_target: 0.9}\n",
       "s.yaml:3: objective.attainment_target: only for kind: max_rate"},
      {"objective: {kind: max_rate, attainment_target: 1.5}\n",
       "s.yaml:3: objective.attainment_target: must be in (0, 1]"},
      {"objective:\n  kind: max_rate\n  rate_scale: {low: 2, high: 1}\n",
       "s.yaml:5: objective.rate_scale.high: must be greater than low"},
      {"objective:\n  kind: max_rate\n  rate_scale: {low: 0}\n",
       "s.yaml:5: objective.rate_scale.low: must be positive"},
      {"objective:\n  kind: max_rate\n  rate_scale: {iterations: -1}\n",
       "s.yaml:5: objective.rate_scale.iterations: must be between 0 and 60"},
      {"gpu_budget: 0\n", "s.yaml:3: gpu_budget: must be at least 1"},
      {"window: {num_requests: 0}\n", "s.yaml:3: window.num_requests: must be at least 1"},
      {"window: {duration_s: -1}\n", "s.yaml:3: window.duration_s: must be positive"},
      // Issue 22: converted to nanoseconds, 1e10 s would overflow the clock.
      {"window: {duration_s: 1e10}\n",
       "s.yaml:3: window.duration_s: must be at most 1e9 s (the largest simulated time)"},
      {"seed: -3\n", "s.yaml:3: seed: must not be negative"},
      {"name: a/b\n", "s.yaml:3: name: must be a non-empty name"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.body);
    const std::string spec =
        dir.Write("s.yaml", "base: cluster.yaml\nworkload: traffic.yaml\n" + c.body);
    const InputError e = CatchInputError([&] { LoadSweepSpec(spec); });
    EXPECT_TRUE(testing::Mentions(e, c.mention)) << e.what();
  }

  const Case whole_files[] = {
      {"workload: traffic.yaml\n", "s.yaml:1: base: missing required field"},
      {"base: nowhere.yaml\nworkload: traffic.yaml\n", "s.yaml:1: base: no such cluster config"},
      {"base: cluster.yaml\n", "s.yaml:1: workload: missing required field"},
      {"base: cluster.yaml\nworkload: none.jsonl\n", "s.yaml:2: workload: no such file"},
      {"base: two_groups.yaml\nworkload: traffic.yaml\n",
       "s.yaml:1: group: required: the base config has several instance groups (a, b)"},
      // The base's own errors name the base.
      {"base: broken_base.yaml\nworkload: traffic.yaml\n",
       "broken_base.yaml:2: instance_groups[0]"},
      {"- just\n- a list\n", "s.yaml:1: expected a mapping"},
  };
  for (const Case& c : whole_files) {
    SCOPED_TRACE(c.body);
    const std::string spec = dir.Write("s.yaml", c.body);
    const InputError e = CatchInputError([&] { LoadSweepSpec(spec); });
    EXPECT_TRUE(testing::Mentions(e, c.mention)) << e.what();
  }
}

}  // namespace
}  // namespace fleetsim
