// A sweep spec (runs/<study>.yaml, documented in docs/SWEEPS.md): a base cluster config,
// the instance group whose layout changes, the workload, the axes whose cartesian product
// gives the points, and the objective that ranks them. Every error names the spec file,
// the line and the key; relative paths are relative to the spec's folder.
//
//   name: tp_study
//   base: ../cluster_configs/default_fleet.yaml
//   group: llama8b-h100
//   workload: examples/default_fleet_traffic.yaml
//   gpu_budget: 32                       # replicas = 32 / tp at each point
//   axes: {tp: [1, 2, 4], policy: [least_outstanding, power_of_two]}
//   objective: {kind: goodput_per_gpu}
//
//   SweepSpec spec = LoadSweepSpec("runs/tp_study.yaml");
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fleetsim {

enum class SweepObjective {
  kGoodputPerGpu,     // fleet goodput (req/s within both SLOs) per GPU of the fleet
  kGoodputPerDollar,  // requests within both SLOs per dollar of GPU time
  kMaxRate,           // the highest rate scale whose SLO attainment stays >= a target
};

std::string_view SweepObjectiveName(SweepObjective objective);

// objective kind max_rate: per point, the rate scale is bisected (geometrically) inside
// [low, high]; a run passes when the fleet's SLO attainment is >= attainment_target.
struct RateSearch {
  double attainment_target = 0.9;
  double low = 0.25;
  double high = 16;
  int iterations = 6;  // bisection runs after the two end checks
};

// The values each axis takes; an empty list is an axis the spec does not sweep.
struct SweepAxes {
  std::vector<int> tp;
  // Data-parallel ranks per instance (with expert parallelism when > 1; MoE models).
  std::vector<int> dp;
  std::vector<bool> enable_prefix_caching;
  std::vector<int> max_num_batched_tokens;
  std::vector<int> max_num_seqs;
  std::vector<int> block_size;
  std::vector<std::string> policy;
  std::vector<bool> capacity_weighted;
  std::vector<std::string> hardware;  // catalog names, or absolute paths to hardware files
  std::vector<double> rate_scale;
  // Prefill/decode disaggregation (docs/SWEEPS.md): `group` is the prefill group and
  // `decode_group` the decode group of the base.
  std::vector<std::string> serving;   // colocated, disaggregated
  std::vector<std::string> pd_split;  // "P:D": the GPU budget's share of each
  std::vector<int> decode_tp;
  std::vector<std::string> decode_hardware;
};

struct SweepSpec {
  std::string file;  // the spec itself
  std::string name;
  std::string base;  // the base cluster config, absolute
  std::string group;
  int base_tp = 1;        // the group's TP in the base config
  int base_dp = 1;        // its DP
  int base_replicas = 1;  // and its replicas
  // GPUs per node of the group's pool: in the base, and with each hardware axis value (a
  // point whose TP x DP exceeds its node is skipped).
  int base_node_gpus = 0;
  std::vector<int> hardware_node_gpus;
  std::string decode_group;  // "" unless the spec names one
  int base_decode_tp = 1;
  std::string workload;  // absolute
  std::string format = "auto";
  std::optional<double> duration_s;
  std::optional<int64_t> num_requests;
  uint64_t seed = 0;
  std::optional<int> gpu_budget;
  SweepAxes axes;
  SweepObjective objective = SweepObjective::kGoodputPerGpu;
  RateSearch rate_search;  // objective max_rate only
};

// "P:D" (two positive integers) as the pair; nullopt otherwise.
std::optional<std::pair<int, int>> ParsePdSplit(std::string_view text);

// Reads and checks a sweep spec, including that the base cluster config loads and holds
// the group. Throws InputError naming file, line and key.
SweepSpec LoadSweepSpec(const std::string& path);

}  // namespace fleetsim
