// A cluster description (cluster_configs/*.yaml): instance groups of one model on one
// GPU type with one bundle, TP degree and engine settings, replicated; and the SLOs that
// define goodput. Every error names the file, line and key and says what is accepted.
//
//   name: single_node_single_instance
//   slo: {ttft_s: 2.0, tpot_s: 0.1}
//   instance_groups:
//     - name: llama8b
//       model: llama-3.1-8b          # models/<name>, or a config.json path
//       hardware: RTX-4090           # cluster_configs/hardware/<name>.yaml
//       bundle: ../../shared/data/profiles/llmservingsim/perf/RTX4090/meta-llama/Llama-3.1-8B/bf16
//       tp: 1
//       replicas: 1
//       engine: {max_num_seqs: 256, max_num_batched_tokens: 2048, enable_prefix_caching: true}
//
// Relative paths are relative to the config file's folder. Node pools, gateways,
// routers and network latencies come with the fleet issue; until then requests are
// spread round-robin over the instances and no network latency is charged.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/yaml_section.h"
#include "engine/engine_config.h"
#include "engine/engine_setup.h"

namespace fleetsim {

struct InstanceGroupConfig {
  std::string name;
  std::string model;
  std::string hardware;
  std::string bundle;  // a bundle directory, or "analytic" (built and cached)
  int replicas = 1;
  EngineConfig engine;
  KvBudget budget;  // hardware filled by the loader
  double step_overhead_us = static_cast<double>(kDefaultStepOverheadNs) / 1000.0;
  // Where in the file the group is, for errors found while building it.
  std::string file;
  int line = 0;
};

struct SloConfig {
  double ttft_s = 2.0;
  double tpot_s = 0.1;
};

struct ClusterConfig {
  std::string file;
  std::string name;
  std::vector<InstanceGroupConfig> groups;
  SloConfig slo;
  int TotalInstances() const;
};

ClusterConfig LoadClusterConfig(const std::string& path);

}  // namespace fleetsim
