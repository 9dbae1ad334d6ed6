#include "app/run_job.h"

#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>

#include "bundles/analytic_bundle.h"
#include "cluster/cluster_config.h"
#include "comm/collectives.h"
#include "core/input_error.h"
#include "core/text_file.h"
#include "fleet/fleet_setup.h"
#include "output/hdf5_file.h"
#include "workload/trace_catalog.h"
#include "workload/workload_source.h"

#ifndef FLEETSIM_VERSION
#define FLEETSIM_VERSION "unknown"
#endif

namespace fleetsim {
namespace {

// Runs `part` on rank 0 alone; every rank learns whether it failed (an InputError exits
// 2, anything else 1), so that none waits forever in the next collective.
template <typename Part>
void OnRankZero(MPI_Comm comm, Part part) {
  const int size = comm::SizeOf(comm);
  int failed = 0;
  if (comm::RankOf(comm) == 0) {
    try {
      part();
    } catch (const InputError&) {
      failed = 1;
      if (size > 1) MPI_Bcast(&failed, 1, MPI_INT, 0, comm);
      throw;
    } catch (const std::exception&) {
      failed = 2;
      if (size > 1) MPI_Bcast(&failed, 1, MPI_INT, 0, comm);
      throw;
    }
  }
  if (size > 1) MPI_Bcast(&failed, 1, MPI_INT, 0, comm);
  if (failed) throw QuietExit{failed == 1 ? kExitInputError : 1};
}

// Rank 0 builds first -- it may generate and cache analytic bundles, which the other
// ranks then find.
FleetSetup BuildOnEveryRank(const ClusterConfig& cluster, MPI_Comm comm) {
  std::optional<FleetSetup> fleet;
  OnRankZero(comm, [&] { fleet = BuildFleetSetup(cluster, CachedAnalyticBundle); });
  if (!fleet) fleet = BuildFleetSetup(cluster, CachedAnalyticBundle);
  return std::move(*fleet);
}

}  // namespace

RunJobResult RunJobOn(const RunJob& job, MPI_Comm comm) {
  const auto wall_start = std::chrono::steady_clock::now();
  const ClusterConfig cluster = LoadClusterConfig(job.cluster);
  const FleetSetup fleet = BuildOnEveryRank(cluster, comm);
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank == 0) {
    for (const std::string& warning : fleet.warnings)
      std::fprintf(stderr, "fleetsim: warning: %s\n", warning.c_str());
  }
  const std::string workload = ResolveWorkload(job.workload);
  // Only rank 0 opens (and reads) the workload; the run sends the others their arrivals.
  std::unique_ptr<WorkloadWindow> source;
  OnRankZero(comm, [&] {
    source = std::make_unique<WorkloadWindow>(OpenWorkload(workload, job.format), job.window);
  });
  // Fail on a bad output path before simulating anything.
  output::Hdf5File file(job.output, comm);
  RunJobResult result;
  result.stats = RunFleet(fleet, source.get(), job.fleet, file, comm);
  result.instances = fleet.instances.size();
  const FleetRunStats& stats = result.stats;

  result.wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  const std::string p = "/provenance";
  file.WriteAttribute(p, "fleetsim_version", std::string(FLEETSIM_VERSION));
  // Texts that grow with the user's input are datasets: an attribute over 64 KiB does not
  // fit its object's header.
  file.WriteText(p, "command_line", job.command_line);
  file.WriteAttribute(p, "cluster_config_path", job.cluster);
  file.WriteText(p, "cluster_config", ReadTextFile(job.cluster));
  file.WriteAttribute(p, "workload_path", workload);
  file.WriteAttribute(p, "workload_format",
                      comm::BroadcastString(source ? source->format() : std::string(), comm));
  file.WriteAttribute(p, "skipped_bad_lines",
                      comm::AllReduceMax(source ? source->skipped_lines() : 0, comm));
  file.WriteAttribute(p, "rate_scale", job.window.rate_scale);
  file.WriteAttribute(p, "seed", static_cast<int64_t>(job.fleet.seed));
  std::string bundles;
  for (const InstanceGroupConfig& g : cluster.groups)
    bundles += g.name + "=" + g.bundle + "\n";
  file.WriteText(p, "bundles", bundles);
  // Each group's attention backend and decode kernel, and why (vLLM's choice for its model,
  // engine settings and GPU), and how its weights are stored.
  std::string attention;
  for (std::size_t g = 0; g < fleet.groups.size(); ++g) {
    const EngineSetup& setup = fleet.groups[g];
    attention += cluster.groups[g].name + "=";
    if (setup.layout.attention) {
      const AttentionPlan& a = *setup.layout.attention;
      attention += a.backend.name + " " + a.decode.name + " block " +
                   std::to_string(setup.layout.block_size) + " (" + a.backend_why + "; " +
                   a.decode_why + ")";
    } else {
      attention += "unknown (no GPU)";
    }
    attention += "; weights: " + setup.engine.quantization.Describe() + "\n";
  }
  file.WriteText(p, "attention", attention);
  file.WriteAttribute(p, "ranks", int64_t{comm::SizeOf(comm)});
  file.WriteAttribute(p, "threads", int64_t{job.fleet.threads});
  file.WriteAttribute(p, "placement", stats.placement);
  file.WriteAttribute(p, "request_rows", int64_t{job.fleet.request_rows});
  file.WriteAttribute(p, "steps", stats.steps);
  file.WriteAttribute(p, "events", stats.events);
  file.WriteAttribute(p, "windows", stats.windows);
  file.WriteAttribute(p, "load_snapshots", stats.snapshots);
  file.WriteAttribute(p, "out_of_grid_lookups", stats.out_of_grid);
  file.WriteAttribute(p, "wall_time_s", result.wall_s);
  // A signal that came while the tables were written still stops the run: no file.
  const int interrupted = job.fleet.interrupted ? job.fleet.interrupted() : 0;
  if (const int64_t signal = comm::AllReduceMax(interrupted, comm); signal != 0)
    throw FleetInterrupted{static_cast<int>(signal)};
  file.Commit();
  return result;
}

}  // namespace fleetsim
