#include "app/run_job.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
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
    } catch (const std::exception& e) {
      failed = 2;
      if (size > 1) MPI_Bcast(&failed, 1, MPI_INT, 0, comm);
      if (size == 1) throw;
      // Every rank knows of it now: said here, it needs no abort (RunJobOn).
      std::fprintf(stderr, "fleetsim: internal error: %s\n", e.what());
      std::fflush(stderr);
      throw QuietExit{1};
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

// A failure this rank met alone -- a failed FLEETSIM_CHECK, memory running out -- outside
// the parts the fleet loop guards (there every rank learns of an error at the next
// meeting): the other ranks may wait in a collective this one never joins, and the output
// file's destructor is collective too. With more than one rank the job is aborted, after
// this rank says why and removes the unfinished file (`<output>.tmp`, as Hdf5File names
// it); alone, the caller reports it.
void AbortIfNotAlone(const std::exception& e, const RunJob& job, MPI_Comm comm) {
  const int size = comm::SizeOf(comm);
  if (size <= 1) return;
  std::fprintf(stderr, "fleetsim: internal error on rank %d of %d: %s (aborting the run)\n",
               comm::RankOf(comm), size, e.what());
  std::fflush(stderr);
  std::error_code ignored;
  std::filesystem::remove(job.output + ".tmp", ignored);
  MPI_Abort(comm, 1);
}

RunJobResult RunJobWith(const RunJob& job, MPI_Comm comm, std::optional<output::Hdf5File>& out) {
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
  output::Hdf5File& file = out.emplace(job.output, comm);
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
  // A signal that came while the tables were written still stops the run: no file. Past
  // this point one no longer does (the file is being committed).
  const int interrupted = job.begin_commit        ? job.begin_commit()
                          : job.fleet.interrupted ? job.fleet.interrupted()
                                                  : 0;
  if (const int64_t signal = comm::AllReduceMax(interrupted, comm); signal != 0)
    throw FleetInterrupted{static_cast<int>(signal)};
  file.Commit();
  return result;
}

}  // namespace

RunJobResult RunJobOn(const RunJob& job, MPI_Comm comm) {
  // The file lives outside the try: a failure on one rank alone is handled before its
  // collective destructor could wait for ranks that will never come.
  std::optional<output::Hdf5File> file;
  try {
    return RunJobWith(job, comm, file);
  } catch (const InputError&) {
    throw;  // met by every rank alike: inputs are read alike, output errors agreed on
  } catch (const std::exception& e) {
    AbortIfNotAlone(e, job, comm);
    throw;
  }
}

}  // namespace fleetsim
