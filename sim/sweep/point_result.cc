#include "sweep/point_result.h"

#include <cstring>
#include <optional>

#include "cluster/cluster_config.h"
#include "cluster/routing_policy.h"
#include "core/input_error.h"
#include "core/project_paths.h"
#include "engine/engine_config.h"
#include "engine/kv_cache_layout.h"
#include "model/model_catalog.h"
#include "output/table_reader.h"

namespace fleetsim {
namespace {

namespace fs = std::filesystem;

// The run's /provenance rate_scale attribute.
double ReadRateScale(const fs::path& path) {
  const std::optional<double> value =
      output::ReadDoubleAttribute(path.string(), "/provenance", "rate_scale");
  if (!value)
    throw InputError(path.string(), 0, "/provenance", "no rate_scale attribute (not a run file?)");
  return *value;
}

output::SummaryRow ReadFleetRow(const fs::path& path) {
  if (!output::HasTable(path.string(), "/summary"))
    throw InputError(path.string(), 0, "", "not a fleetsim run file (no /summary table)");
  const output::TableRows rows =
      output::ReadTable(path.string(), "/summary", output::SummarySchema());
  for (int64_t i = 0; i < rows.count; ++i) {
    const auto& row = rows.at<output::SummaryRow>(i);
    if (std::strncmp(row.group, "fleet", sizeof row.group) == 0) return row;
  }
  throw InputError(path.string(), 0, "/summary", "no row 'fleet'");
}

}  // namespace

PointResult ReadPointResult(const fs::path& config_path, const fs::path& result_path,
                            const std::string& group_name) {
  PointResult r;
  r.fleet = ReadFleetRow(result_path);
  r.rate_scale = ReadRateScale(result_path);

  const ClusterConfig cluster = LoadClusterConfig(config_path.string());
  for (const InstanceGroupConfig& g : cluster.groups) {
    const int64_t gpus = int64_t{g.replicas} * g.GpusPerInstance();  // TP x DP each
    r.gpus += gpus;
    r.cost_per_hour_usd +=
        static_cast<double>(gpus) * g.budget.hardware->price_per_gpu_hour_usd.value;
    if (g.name != group_name) continue;
    r.tp = g.engine.tensor_parallel_size;
    r.dp = g.dp;
    r.replicas = g.replicas;
    r.hardware = g.hardware;
    const ModelCard card = ModelCatalog(ModelsDir()).Load(g.model);
    const SettingError error = [&g](std::string_view setting, const std::string& message) {
      return InputError(g.file, g.line, "engine." + std::string(setting), message);
    };
    const ResolvedEngineConfig engine =
        ResolveEngineConfig(card, g.engine, g.budget.hardware->UsableMemoryBytes(), error);
    r.prefix_caching = engine.prefix_caching;
    r.max_num_batched_tokens = engine.max_num_batched_tokens;
    r.max_num_seqs = engine.max_num_seqs;
    const KvCacheLayout layout = ResolveKvCacheLayout(card, engine, error, &*g.budget.hardware);
    r.block_size = layout.block_size;
    r.attention_backend = layout.attention->backend.name;
    r.decode_kernel = layout.attention->decode.name;
  }
  if (r.hardware.empty())
    throw InputError(config_path.string(), 0, "instance_groups", "no group '" + group_name + "'");
  r.policy = std::string(RoutingPolicyName(cluster.gateways.router.policy));
  r.capacity_weighted = cluster.gateways.router.capacity_weighted;
  return r;
}

}  // namespace fleetsim
