// The points of a sweep: the cartesian product of its axes, in the fixed axis order tp, dp,
// enable_prefix_caching, max_num_batched_tokens, max_num_seqs, policy, capacity_weighted,
// hardware, rate_scale, serving, pd_split, decode_tp, decode_hardware (the last varies
// fastest). With a gpu_budget each point's replicas are gpu_budget / (tp x dp); a
// combination whose TP x DP does not divide the budget, or does not fit one node, is
// skipped (and listed), so the points are numbered 0..N-1 without gaps.
//
//   SweepPoints sweep = ExpandPoints(spec);
//   for (const SweepPoint& p : sweep.points)
//     std::cout << p.index << ": " << DescribePoint(p) << '\n';   // "tp=2 replicas=16 ..."
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "sweep/sweep_spec.h"

namespace fleetsim {

// The values one point gives the swept group; unset: as in the base config.
struct SweepPoint {
  int index = 0;
  std::optional<int> tp;
  std::optional<int> dp;        // > 1: with enable_expert_parallel
  std::optional<int> replicas;  // gpu_budget / (tp x dp)
  std::optional<bool> enable_prefix_caching;
  std::optional<int> max_num_batched_tokens;
  std::optional<int> max_num_seqs;
  std::optional<int> block_size;
  std::optional<std::string> policy;
  std::optional<bool> capacity_weighted;
  std::optional<std::string> hardware;
  std::optional<double> rate_scale;
  // Prefill/decode disaggregation: colocated serves on the prefill group alone, made mixed
  // (the decode group is dropped); else the budget is split P:D between the two groups.
  std::optional<std::string> serving;
  std::optional<std::string> pd_split;
  std::optional<int> decode_tp;
  std::optional<int> decode_replicas;
  std::optional<std::string> decode_hardware;
  bool colocated() const { return serving == "colocated"; }

  double RateScale() const { return rate_scale.value_or(1.0); }
};

struct SweepPoints {
  std::vector<SweepPoint> points;
  std::vector<std::string> skipped;  // "tp=3: 64 GPUs is not a multiple of TP 3"
};

SweepPoints ExpandPoints(const SweepSpec& spec);

// The point's values, "tp=2 replicas=16 policy=power_of_two" ("base" when it sets none).
std::string DescribePoint(const SweepPoint& point);

// The files of point k under a sweep's output folder.
std::filesystem::path PointsDir(const std::filesystem::path& output_dir);
std::filesystem::path PointConfigPath(const std::filesystem::path& output_dir, int k);
std::filesystem::path PointResultPath(const std::filesystem::path& output_dir, int k);

// <spec folder>/out/<spec name>: where a sweep writes when no --output-dir is given.
std::filesystem::path DefaultOutputDir(const SweepSpec& spec);

}  // namespace fleetsim
