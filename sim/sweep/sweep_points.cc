#include "sweep/sweep_points.h"

#include <optional>
#include <string>
#include <utility>

#include "core/format.h"

namespace fleetsim {
namespace {

namespace fs = std::filesystem;

// Sets value i of one axis on a point; in the axis order of the product.
using ApplyValue = void (*)(const SweepAxes& axes, std::size_t i, SweepPoint& point);

constexpr ApplyValue kAxes[] = {
    [](const SweepAxes& a, std::size_t i, SweepPoint& p) { p.tp = a.tp[i]; },
    [](const SweepAxes& a, std::size_t i, SweepPoint& p) { p.dp = a.dp[i]; },
    [](const SweepAxes& a, std::size_t i, SweepPoint& p) {
      p.enable_prefix_caching = static_cast<bool>(a.enable_prefix_caching[i]);
    },
    [](const SweepAxes& a, std::size_t i, SweepPoint& p) {
      p.max_num_batched_tokens = a.max_num_batched_tokens[i];
    },
    [](const SweepAxes& a, std::size_t i, SweepPoint& p) { p.max_num_seqs = a.max_num_seqs[i]; },
    [](const SweepAxes& a, std::size_t i, SweepPoint& p) { p.block_size = a.block_size[i]; },
    [](const SweepAxes& a, std::size_t i, SweepPoint& p) { p.policy = a.policy[i]; },
    [](const SweepAxes& a, std::size_t i, SweepPoint& p) {
      p.capacity_weighted = static_cast<bool>(a.capacity_weighted[i]);
    },
    [](const SweepAxes& a, std::size_t i, SweepPoint& p) { p.hardware = a.hardware[i]; },
    [](const SweepAxes& a, std::size_t i, SweepPoint& p) { p.rate_scale = a.rate_scale[i]; },
    [](const SweepAxes& a, std::size_t i, SweepPoint& p) { p.serving = a.serving[i]; },
    [](const SweepAxes& a, std::size_t i, SweepPoint& p) { p.pd_split = a.pd_split[i]; },
    [](const SweepAxes& a, std::size_t i, SweepPoint& p) { p.decode_tp = a.decode_tp[i]; },
    [](const SweepAxes& a, std::size_t i, SweepPoint& p) {
      p.decode_hardware = a.decode_hardware[i];
    },
};
// The decode axes (pd_split, decode_tp, decode_hardware): a colocated point ignores them.
constexpr std::size_t kFirstDecodeAxis = 11;

// The sizes of the axes in kAxes order; 0 for an axis the spec leaves out.
std::vector<std::size_t> AxisSizes(const SweepAxes& a) {
  return {a.tp.size(),
          a.dp.size(),
          a.enable_prefix_caching.size(),
          a.max_num_batched_tokens.size(),
          a.max_num_seqs.size(),
          a.block_size.size(),
          a.policy.size(),
          a.capacity_weighted.size(),
          a.hardware.size(),
          a.rate_scale.size(),
          a.serving.size(),
          a.pd_split.size(),
          a.decode_tp.size(),
          a.decode_hardware.size()};
}

// Splits the GPU budget between the prefill and the decode group: replicas of each, or
// why the point cannot be (a share not a whole number of its group's instances).
std::optional<std::string> SplitBudget(const SweepSpec& spec, SweepPoint& point) {
  const int budget = *spec.gpu_budget;
  const int tp = point.tp.value_or(spec.base_tp);
  if (point.colocated()) {
    if (budget % tp != 0)
      return "gpu_budget " + std::to_string(budget) + " is not a multiple of TP " +
             std::to_string(tp);
    point.replicas = budget / tp;
    return std::nullopt;
  }
  const auto [p, d] = ParsePdSplit(point.pd_split.value_or("1:1")).value_or(std::make_pair(1, 1));
  const int decode_tp = point.decode_tp.value_or(spec.base_decode_tp);
  const int prefill_gpus = budget * p / (p + d);
  if (budget * p % (p + d) != 0 || prefill_gpus % tp != 0 || (budget - prefill_gpus) % decode_tp)
    return "gpu_budget " + std::to_string(budget) + " split " + std::to_string(p) + ":" +
           std::to_string(d) + " is not whole instances of TP " + std::to_string(tp) +
           " (prefill) and TP " + std::to_string(decode_tp) + " (decode)";
  point.replicas = prefill_gpus / tp;
  point.decode_replicas = (budget - prefill_gpus) / decode_tp;
  return std::nullopt;
}

// Why the point's TP x DP GPUs do not fit one node of its hardware (each TP alone was
// checked against every node when the spec was read).
std::optional<std::string> NodeMisfit(const SweepSpec& spec, const SweepPoint& point) {
  const int dp = point.dp.value_or(spec.base_dp);
  if (dp <= 1) return std::nullopt;
  int node = spec.base_node_gpus;
  if (point.hardware) {
    for (std::size_t h = 0; h < spec.axes.hardware.size(); ++h) {
      if (spec.axes.hardware[h] == *point.hardware && h < spec.hardware_node_gpus.size())
        node = spec.hardware_node_gpus[h];
    }
  }
  const int gpus = point.tp.value_or(spec.base_tp) * dp;
  if (node <= 0 || gpus <= node) return std::nullopt;
  return "DP " + std::to_string(dp) + " x TP " + std::to_string(point.tp.value_or(spec.base_tp)) +
         " = " + std::to_string(gpus) + " GPUs exceed one node's " + std::to_string(node) +
         " (an instance stays inside a node)";
}

}  // namespace

SweepPoints ExpandPoints(const SweepSpec& spec) {
  const std::vector<std::size_t> sizes = AxisSizes(spec.axes);
  std::size_t combinations = 1;
  for (std::size_t size : sizes)
    combinations *= size == 0 ? 1 : size;
  SweepPoints out;
  for (std::size_t c = 0; c < combinations; ++c) {
    SweepPoint point;
    // Mixed radix, the last axis fastest.
    std::size_t rest = c;
    bool decode_axes_moved = false;  // a decode axis past its first value
    for (std::size_t a = sizes.size(); a-- > 0;) {
      if (sizes[a] == 0) continue;
      kAxes[a](spec.axes, rest % sizes[a], point);
      decode_axes_moved |= a >= kFirstDecodeAxis && rest % sizes[a] != 0;
      rest /= sizes[a];
    }
    if (point.colocated()) {
      const std::string without_decode = DescribePoint(point);
      point.pd_split.reset();
      point.decode_tp.reset();
      point.decode_hardware.reset();
      if (decode_axes_moved) {
        out.skipped.push_back(without_decode +
                              ": colocated serving has no decode group (the point with the "
                              "decode axes' first values runs it)");
        continue;
      }
    }
    if (const auto why = NodeMisfit(spec, point)) {
      out.skipped.push_back(DescribePoint(point) + ": " + *why);
      continue;
    }
    if (spec.gpu_budget && !spec.decode_group.empty()) {
      if (const auto why = SplitBudget(spec, point)) {
        out.skipped.push_back(DescribePoint(point) + ": " + *why);
        continue;
      }
    } else if (spec.gpu_budget) {
      const int tp = point.tp.value_or(spec.base_tp);
      const int dp = point.dp.value_or(spec.base_dp);
      if (*spec.gpu_budget % (tp * dp) != 0) {
        out.skipped.push_back(DescribePoint(point) + ": gpu_budget " +
                              std::to_string(*spec.gpu_budget) + " is not a multiple of " +
                              (dp > 1 ? "DP " + std::to_string(dp) + " x " : std::string()) +
                              "TP " + std::to_string(tp));
        continue;
      }
      point.replicas = *spec.gpu_budget / (tp * dp);
    }
    point.index = static_cast<int>(out.points.size());
    out.points.push_back(std::move(point));
  }
  return out;
}

std::string DescribePoint(const SweepPoint& p) {
  std::string text;
  auto add = [&text](const std::string& key, const std::string& value) {
    text += (text.empty() ? "" : " ") + key + "=" + value;
  };
  auto flag = [](bool value) { return std::string(value ? "true" : "false"); };
  if (p.tp) add("tp", std::to_string(*p.tp));
  if (p.dp) add("dp", std::to_string(*p.dp));
  if (p.replicas) add("replicas", std::to_string(*p.replicas));
  if (p.enable_prefix_caching) add("prefix_caching", flag(*p.enable_prefix_caching));
  if (p.max_num_batched_tokens)
    add("max_num_batched_tokens", std::to_string(*p.max_num_batched_tokens));
  if (p.max_num_seqs) add("max_num_seqs", std::to_string(*p.max_num_seqs));
  if (p.block_size) add("block_size", std::to_string(*p.block_size));
  if (p.policy) add("policy", *p.policy);
  if (p.capacity_weighted) add("capacity_weighted", flag(*p.capacity_weighted));
  if (p.hardware) add("hardware", fs::path(*p.hardware).stem().string());
  if (p.rate_scale) add("rate_scale", Significant(*p.rate_scale));
  if (p.serving) add("serving", *p.serving);
  if (p.pd_split) add("pd_split", *p.pd_split);
  if (p.decode_tp) add("decode_tp", std::to_string(*p.decode_tp));
  if (p.decode_replicas) add("decode_replicas", std::to_string(*p.decode_replicas));
  if (p.decode_hardware) add("decode_hardware", fs::path(*p.decode_hardware).stem().string());
  return text.empty() ? "base" : text;
}

fs::path PointsDir(const fs::path& output_dir) {
  return output_dir / "points";
}

fs::path PointConfigPath(const fs::path& output_dir, int k) {
  return PointsDir(output_dir) / ("point-" + std::to_string(k) + ".yaml");
}

fs::path PointResultPath(const fs::path& output_dir, int k) {
  return PointsDir(output_dir) / ("point-" + std::to_string(k) + ".h5");
}

fs::path DefaultOutputDir(const SweepSpec& spec) {
  return fs::absolute(spec.file).parent_path() / "out" / spec.name;
}

}  // namespace fleetsim
