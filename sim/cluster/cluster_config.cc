#include "cluster/cluster_config.h"

#include <filesystem>

#include "core/project_paths.h"
#include "model/hardware.h"

namespace fleetsim {
namespace {

namespace fs = std::filesystem;

std::string Resolve(const std::string& base_dir, const std::string& path) {
  const fs::path p(path);
  return p.is_absolute() ? path : (fs::path(base_dir) / p).lexically_normal().string();
}

void ReadEngine(const YamlSection& e, InstanceGroupConfig& group) {
  e.RejectUnknownKeys({"max_num_seqs", "max_num_batched_tokens", "max_model_len",
                       "enable_prefix_caching", "enable_chunked_prefill", "block_size",
                       "long_prefill_token_threshold", "kv_cache_dtype", "mamba_cache_dtype",
                       "mamba_ssm_cache_dtype", "gpu_memory_utilization", "kv_cache_memory_bytes",
                       "num_gpu_blocks", "step_overhead_us"});
  EngineConfig& c = group.engine;
  c.max_num_seqs = e.Find<int>("max_num_seqs");
  c.max_num_batched_tokens = e.Find<int>("max_num_batched_tokens");
  c.max_model_len = e.Find<int64_t>("max_model_len");
  c.enable_prefix_caching = e.Find<bool>("enable_prefix_caching");
  c.enable_chunked_prefill = e.GetOr<bool>("enable_chunked_prefill", true);
  c.block_size = e.Find<int>("block_size");
  c.long_prefill_token_threshold = e.GetOr<int>("long_prefill_token_threshold", 0);
  c.kv_cache_dtype = e.GetOr<std::string>("kv_cache_dtype", "auto");
  c.mamba_cache_dtype = e.GetOr<std::string>("mamba_cache_dtype", "auto");
  c.mamba_ssm_cache_dtype = e.GetOr<std::string>("mamba_ssm_cache_dtype", "auto");
  group.budget.gpu_memory_utilization = e.GetOr<double>("gpu_memory_utilization", 0.9);
  if (group.budget.gpu_memory_utilization <= 0 || group.budget.gpu_memory_utilization > 1) {
    e.Fail("gpu_memory_utilization", "must be in (0, 1]");
  }
  group.budget.kv_cache_bytes = e.Find<int64_t>("kv_cache_memory_bytes");
  group.budget.num_blocks = e.Find<int64_t>("num_gpu_blocks");
  group.step_overhead_us = e.GetOr<double>("step_overhead_us", group.step_overhead_us);
  if (group.step_overhead_us < 0) e.Fail("step_overhead_us", "must not be negative");
}

InstanceGroupConfig ReadGroup(const YamlSection& g, const std::string& base_dir) {
  g.RejectUnknownKeys({"name", "model", "hardware", "bundle", "tp", "replicas", "engine"});
  InstanceGroupConfig group;
  group.file = g.file();
  group.line = g.line();
  group.name = g.Get<std::string>("name");
  group.model = g.Get<std::string>("model");
  if (group.model.find('/') != std::string::npos) group.model = Resolve(base_dir, group.model);
  group.hardware = g.Get<std::string>("hardware");
  try {
    group.budget.hardware = LoadHardware(HardwareCatalogDir(), group.hardware);
  } catch (const InputError& e) {
    g.Fail("hardware", e.what());
  }
  // `analytic` (the default): fleetsim builds the bundle from its kernel model, cached.
  group.bundle = g.GetOr<std::string>("bundle", "analytic");
  if (group.bundle != "analytic") {
    group.bundle = Resolve(base_dir, group.bundle);
    if (!fs::exists(fs::path(group.bundle) / "meta.yaml")) {
      g.Fail("bundle",
             "no performance bundle (meta.yaml) at " + group.bundle + " (or say: analytic)");
    }
  }
  group.engine.tensor_parallel_size = g.GetOr<int>("tp", 1);
  const int gpus_per_node = static_cast<int>(group.budget.hardware->gpus_per_node.value);
  if (group.engine.tensor_parallel_size > gpus_per_node) {
    g.Fail("tp", "TP " + std::to_string(group.engine.tensor_parallel_size) + " exceeds the " +
                     std::to_string(gpus_per_node) + " GPUs of one " + group.hardware +
                     " node (tensor parallelism stays inside a node)");
  }
  group.replicas = g.GetOr<int>("replicas", 1);
  if (group.replicas <= 0) g.Fail("replicas", "must be positive");
  if (auto engine = g.FindChild("engine")) ReadEngine(*engine, group);
  return group;
}

}  // namespace

int ClusterConfig::TotalInstances() const {
  int total = 0;
  for (const InstanceGroupConfig& g : groups)
    total += g.replicas;
  return total;
}

ClusterConfig LoadClusterConfig(const std::string& path) {
  const YamlSection doc = LoadYamlFile(path);
  doc.RejectUnknownKeys({"name", "instance_groups", "slo"});
  ClusterConfig config;
  config.file = path;
  const std::string base_dir = fs::path(path).parent_path().string();
  config.name = doc.GetOr<std::string>("name", fs::path(path).stem().string());
  if (auto slo = doc.FindChild("slo")) {
    slo->RejectUnknownKeys({"ttft_s", "tpot_s"});
    config.slo.ttft_s = slo->GetOr<double>("ttft_s", config.slo.ttft_s);
    config.slo.tpot_s = slo->GetOr<double>("tpot_s", config.slo.tpot_s);
  }
  const YAML::Node groups = doc.node()["instance_groups"];
  if (!groups || !groups.IsSequence() || groups.size() == 0) {
    doc.Fail("instance_groups", "needs a list of at least one instance group");
  }
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const YamlSection group(groups[i], std::make_shared<const std::string>(path),
                            "instance_groups[" + std::to_string(i) + "]");
    if (!groups[i].IsMap()) group.Fail("", "expected a mapping");
    config.groups.push_back(ReadGroup(group, base_dir));
    for (std::size_t j = 0; j + 1 < config.groups.size(); ++j) {
      if (config.groups[j].name == config.groups.back().name) {
        group.Fail("name", "duplicate instance group name '" + config.groups.back().name + "'");
      }
    }
  }
  return config;
}

}  // namespace fleetsim
