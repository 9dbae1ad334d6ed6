#include "app/dry_run.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "app/collectives_text.h"
#include "bundles/analytic_bundle.h"
#include "cluster/cluster_config.h"
#include "core/format.h"
#include "fleet/fleet_setup.h"
#include "fleet/instance_shard.h"
#include "fleet/window_clock.h"
#include "workload/generator.h"
#include "workload/generator_spec.h"
#include "workload/trace_catalog.h"
#include "workload/workload_source.h"

namespace fleetsim {
namespace {

std::string Milliseconds(SimTime t) {
  return Significant(ToSeconds(t) * 1e3, 4) + " ms";
}

// The attention backend and decode kernel a group's engine runs: vLLM's choice for its
// model, engine settings and GPU (engine/kv_cache_layout.h), with why.
std::string AttentionBackendOf(const EngineSetup& setup) {
  if (!setup.layout.attention) return "unknown (no GPU)";
  const AttentionPlan& a = *setup.layout.attention;
  return a.backend.name + ", decode kernel " + a.decode.name + " (" + a.backend_why + "; " +
         a.decode_why + ")";
}

// "node 0: instances 0-7 on GPUs 0-7" per node the group uses, in node order.
std::vector<std::string> PlacementLines(const FleetSetup& fleet, std::size_t group) {
  struct Span {
    int32_t first_instance = -1, last_instance = -1, first_gpu = 0, last_gpu = 0;
  };
  std::map<std::pair<int32_t, int32_t>, Span> nodes;               // (pool, node)
  const int gpus = fleet.cluster.groups[group].GpusPerInstance();  // TP x DP
  for (const FleetInstanceInfo& info : fleet.instances) {
    if (static_cast<std::size_t>(info.group) != group) continue;
    Span& span = nodes[{info.placement.pool, info.placement.node}];
    if (span.first_instance < 0) {
      span.first_instance = info.id;
      span.first_gpu = info.placement.first_gpu;
    }
    span.last_instance = info.id;
    span.last_gpu = info.placement.first_gpu + gpus - 1;
  }
  std::vector<std::string> lines;
  for (const auto& [where, span] : nodes) {
    const std::string instances = span.first_instance == span.last_instance
                                      ? "instance " + std::to_string(span.first_instance)
                                      : "instances " + std::to_string(span.first_instance) + "-" +
                                            std::to_string(span.last_instance);
    lines.push_back(fleet.cluster.pools[static_cast<std::size_t>(where.first)].name + " node " +
                    std::to_string(where.second) + ": " + instances + " on GPUs " +
                    std::to_string(span.first_gpu) + "-" + std::to_string(span.last_gpu));
  }
  return lines;
}

constexpr const char* kEveryRankReads = "every rank reads it and makes its gateways' requests";
constexpr const char* kRankZeroReads = "rank 0 reads it and sends each rank its gateways' requests";

void PrintWorkload(const RunJob& job, std::FILE* out) {
  const std::string path = ResolveWorkload(job.workload);
  const WindowOptions& window = job.window;
  std::string scaled =
      window.rate_scale != 1 ? ", arrivals x" + Significant(window.rate_scale, 4) : "";
  if (window.duration)
    scaled += ", only the first " + Significant(ToSeconds(*window.duration), 6) + " s";
  if (window.num_requests) scaled += ", at most " + WithCommas(*window.num_requests) + " requests";
  if (job.format == "auto" || job.format == "generator") {
    if (IsGeneratorSpec(path)) {
      const auto spec = workload_gen::GeneratorSpec::Parse(LoadYamlFile(path));
      std::string size = spec.num_requests ? WithCommas(*spec.num_requests) + " requests"
                                           : std::string("requests without a count");
      if (spec.duration) size += " within " + Significant(ToSeconds(*spec.duration), 6) + " s";
      const double rate = spec.arrivals.rate_per_s * window.rate_scale;
      // As run_job.cc decides (docs/DESIGN.md, "Readers").
      const bool every_rank_reads =
          !spec.sessions && !job.strict_models && !job.window.skip_bad_lines;
      std::fprintf(out, "workload    %s: generated, %s, arriving at %s/s%s%s; %s\n", path.c_str(),
                   size.c_str(), Significant(rate, 4).c_str(),
                   spec.sessions ? " (session starts; later turns add to it)" : "", scaled.c_str(),
                   every_rank_reads ? kEveryRankReads : kRankZeroReads);
      return;
    }
  }
  // A trace's size and rate are known only once it is read, which a dry run does not do.
  std::fprintf(out,
               "workload    %s: a trace (format %s); its size and rate are known once read%s; %s\n",
               path.c_str(), job.format.c_str(), scaled.c_str(), kRankZeroReads);
}

}  // namespace

void PrintDryRun(const RunJob& job, std::FILE* out) {
  const ClusterConfig cluster = LoadClusterConfig(job.cluster);
  const FleetSetup fleet = BuildFleetSetup(cluster, CachedAnalyticBundle);
  for (const std::string& warning : fleet.warnings)
    std::fprintf(stderr, "fleetsim: warning: %s\n", warning.c_str());
  std::fprintf(out, "dry run of %s (%s): nothing simulated, no file written\n", job.cluster.c_str(),
               cluster.name.c_str());
  for (std::size_t g = 0; g < cluster.groups.size(); ++g) {
    const InstanceGroupConfig& group = cluster.groups[g];
    const EngineSetup& setup = fleet.groups[g];
    const std::string dp =
        group.dp > 1 ? ", DP " + std::to_string(group.dp) + " with expert parallelism" : "";
    const char* per = group.dp > 1 ? "per DP rank" : "per instance";
    std::fprintf(out, "\ngroup %s: %d x %s, TP %d%s, on %s\n", group.name.c_str(), group.replicas,
                 setup.card.name.c_str(), setup.engine.tp, dp.c_str(), group.hardware.c_str());
    for (const std::string& line : PlacementLines(fleet, g))
      std::fprintf(out, "  placement         %s\n", line.c_str());
    std::fprintf(out, "  bundle            %s (%s%s)\n", setup.bundle.dir.c_str(),
                 setup.bundle.source.c_str(),
                 group.bundle == "analytic" ? ", built by fleetsim's analytic model and cached"
                                            : ", as the config names it");
    std::fprintf(out, "  attention backend %s\n", AttentionBackendOf(setup).c_str());
    const int64_t per_request =
        setup.layout.BlocksPerRequest(setup.layout.max_model_len, setup.engine.mamba_mode);
    const int64_t usable = setup.num_blocks - 1;  // block 0 is the null block
    std::fprintf(out, "  KV cache          %s blocks of %d tokens %s (%s)\n",
                 WithCommas(usable).c_str(), setup.layout.block_size, per,
                 BinaryBytes(usable * setup.layout.pool_block_bytes).c_str());
    std::fprintf(
        out,
        "  max concurrency   %s requests of max_model_len %s tokens %s "
        "(%s blocks each); max_num_seqs %d\n",
        per_request > 0
            ? Fixed(static_cast<double>(usable) / static_cast<double>(per_request), 2).c_str()
            : "-",
        WithCommas(setup.layout.max_model_len).c_str(), per, WithCommas(per_request).c_str(),
        setup.engine.max_num_seqs);
    std::fprintf(out,
                 "  engine            prefix caching %s, chunked prefill %s, async scheduling %s, "
                 "token budget %d\n",
                 setup.engine.prefix_caching ? "on" : "off",
                 setup.engine.chunked_prefill ? "on" : "off",
                 setup.engine.async_scheduling ? "on" : "off", setup.engine.max_num_batched_tokens);
    if (group.budget.hardware) {
      const int gpus = group.GpusPerInstance();
      if (auto transport = GroupTransportText(*group.budget.hardware, gpus)) {
        std::fprintf(out, "  collectives       %d GPUs of a node: NCCL goes %s (%s)\n", gpus,
                     transport->c_str(), NodeText(*group.budget.hardware).c_str());
      }
    }
  }
  const WindowClock clock(DelaysOf(cluster).gateway_to_instance, cluster.gateways.staleness_s);
  std::fprintf(out, "\nrouting     %d gateway(s), %s%s, load view refreshed every %s\n",
               cluster.gateways.count,
               std::string(RoutingPolicyName(cluster.gateways.router.policy)).c_str(),
               cluster.gateways.router.capacity_weighted ? " (capacity-weighted)" : "",
               Milliseconds(clock.epoch()).c_str());
  std::fprintf(out,
               "windows     at most %s of simulated time (routing steps of %s, the gateway -> "
               "instance latency; one load-snapshot epoch, capped at %s)\n",
               Milliseconds(std::min(clock.epoch(), clock.max_window())).c_str(),
               Milliseconds(clock.step()).c_str(), Milliseconds(clock.max_window()).c_str());
  PrintWorkload(job, out);
}

}  // namespace fleetsim
