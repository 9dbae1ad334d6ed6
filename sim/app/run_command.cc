#include "app/run_command.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <unistd.h>

#include "cluster/cluster_config.h"
#include "comm/collectives.h"
#include "comm/mpi_runtime.h"
#include "core/project_paths.h"
#include "fleet/fleet_metrics.h"
#include "fleet/fleet_run.h"
#include "fleet/fleet_setup.h"
#include "output/hdf5_file.h"
#include "workload/workload_source.h"
#include "workload/workload_window.h"

#ifndef FLEETSIM_VERSION
#define FLEETSIM_VERSION "unknown"
#endif

namespace fleetsim {
namespace {

namespace fs = std::filesystem;

struct RunOptions {
  std::string cluster;
  std::string workload;
  std::string format = "auto";
  std::string output = "fleetsim-run.h5";
  std::optional<double> horizon_s;
  bool trace_steps = false;
  bool no_request_rows = false;
  double rate_scale = 1.0;
  std::optional<double> duration_s;
  std::optional<int64_t> num_requests;
  bool skip_bad_lines = false;
  int threads = 1;
  uint64_t seed = 0;
  bool quiet = false;
  std::string command_line;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Rank 0 builds first -- it may generate and cache analytic bundles, which the other
// ranks then find -- and every rank learns whether it failed, so none waits forever.
FleetSetup BuildOnEveryRank(const ClusterConfig& cluster, const comm::MpiRuntime& mpi) {
  std::optional<FleetSetup> fleet;
  int failed = 0;
  if (mpi.rank() == 0) {
    try {
      fleet = BuildFleetSetup(cluster);
    } catch (const InputError&) {
      failed = 1;
      if (mpi.size() == 1) throw;
      MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD);
      throw;
    } catch (const std::exception&) {
      failed = 2;
      if (mpi.size() == 1) throw;
      MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD);
      throw;
    }
  }
  if (mpi.size() > 1) MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (failed) throw QuietExit{failed == 1 ? kExitInputError : 1};
  if (!fleet) fleet = BuildFleetSetup(cluster);
  return std::move(*fleet);
}

void Run(const RunOptions& options) {
  const auto wall_start = std::chrono::steady_clock::now();
  comm::MpiRuntime mpi(nullptr, nullptr);
  // Inputs are read identically on every rank, so every rank meets the same error; only
  // rank 0 prints it.
  try {
    if (options.threads < 1) throw OptionError("--threads", "must be at least 1");
    const ClusterConfig cluster = LoadClusterConfig(options.cluster);
    const FleetSetup fleet = BuildOnEveryRank(cluster, mpi);
    WindowOptions window;
    window.rate_scale = options.rate_scale;
    if (options.duration_s) window.duration = SecondsToSimTime(*options.duration_s);
    window.num_requests = options.num_requests;
    window.skip_bad_lines = options.skip_bad_lines;
    auto source =
        std::make_unique<WorkloadWindow>(OpenWorkload(options.workload, options.format), window);
    // Fail on a bad output path before simulating anything.
    output::Hdf5File file(options.output, MPI_COMM_WORLD);

    FleetRunOptions run;
    run.seed = options.seed;
    run.threads = options.threads;
    if (options.horizon_s) run.horizon = SecondsToSimTime(*options.horizon_s);
    run.trace_steps = options.trace_steps;
    run.request_rows = !options.no_request_rows;
    run.progress = !options.quiet && isatty(STDERR_FILENO);
    const FleetRunStats stats = RunFleet(fleet, *source, run, file, MPI_COMM_WORLD);

    const double wall_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
    file.WriteAttribute("/provenance", "fleetsim_version", std::string(FLEETSIM_VERSION));
    file.WriteAttribute("/provenance", "command_line", options.command_line);
    file.WriteAttribute("/provenance", "cluster_config_path", options.cluster);
    file.WriteAttribute("/provenance", "cluster_config", ReadFile(options.cluster));
    file.WriteAttribute("/provenance", "workload_path", options.workload);
    file.WriteAttribute("/provenance", "workload_format", source->format());
    file.WriteAttribute("/provenance", "skipped_bad_lines",
                        comm::AllReduceMax(source->skipped_lines(), MPI_COMM_WORLD));
    file.WriteAttribute("/provenance", "rate_scale", options.rate_scale);
    file.WriteAttribute("/provenance", "seed", static_cast<int64_t>(options.seed));
    std::string bundles;
    for (const InstanceGroupConfig& g : cluster.groups)
      bundles += g.name + "=" + g.bundle + "\n";
    file.WriteAttribute("/provenance", "bundles", bundles);
    file.WriteAttribute("/provenance", "ranks", int64_t{mpi.size()});
    file.WriteAttribute("/provenance", "threads", int64_t{options.threads});
    file.WriteAttribute("/provenance", "placement", stats.placement);
    file.WriteAttribute("/provenance", "request_rows", int64_t{!options.no_request_rows});
    file.WriteAttribute("/provenance", "steps", stats.steps);
    file.WriteAttribute("/provenance", "events", stats.events);
    file.WriteAttribute("/provenance", "windows", stats.windows);
    file.WriteAttribute("/provenance", "load_snapshots", stats.snapshots);
    file.WriteAttribute("/provenance", "out_of_grid_lookups", stats.out_of_grid);
    file.WriteAttribute("/provenance", "wall_time_s", wall_s);
    file.Commit();

    if (!options.quiet && mpi.rank() == 0) {
      PrintSummary(stats.summary);
      std::printf(
          "%lld requests on %zu instances, %lld engine steps, %lld events (%.3g/s), %lld "
          "windows, %lld out-of-grid lookups; %d rank(s) x %d thread(s), %.2f s wall\nwrote %s\n",
          static_cast<long long>(stats.requests), fleet.instances.size(),
          static_cast<long long>(stats.steps), static_cast<long long>(stats.events),
          static_cast<double>(stats.events) / wall_s, static_cast<long long>(stats.windows),
          static_cast<long long>(stats.out_of_grid), mpi.size(), options.threads, wall_s,
          options.output.c_str());
    }
  } catch (const InputError&) {
    if (mpi.rank() != 0) throw QuietExit{kExitInputError};
    throw;
  }
}

}  // namespace

void AddRunCommand(CLI::App& app, std::string command_line) {
  auto options = std::make_shared<RunOptions>();
  options->command_line = std::move(command_line);
  CLI::App* run = app.add_subcommand(
      "run", "Simulate a cluster config's instances serving a workload; results in one HDF5 file");
  options->cluster = (ProjectRoot() / "cluster_configs" / "default_fleet.yaml").string();
  options->workload = (ProjectRoot() / "runs" / "examples" / "default_fleet_traffic.yaml").string();
  run->add_option("--cluster", options->cluster,
                  "Cluster config (default: the bundled fleet, cluster_configs/default_fleet.yaml)")
      ->check(CLI::ExistingFile);
  run->add_option("--workload", options->workload,
                  "Workload: a trace (native JSONL, vLLM-bench, Azure, Vidur, Mooncake) or a "
                  "generator spec (default: runs/examples/default_fleet_traffic.yaml)")
      ->check(CLI::ExistingFile);
  run->add_option("--format", options->format, "Trace format: auto, native, vllm-bench")
      ->capture_default_str();
  run->add_option("--output", options->output, "The HDF5 file to write")->capture_default_str();
  run->add_option("--horizon", options->horizon_s,
                  "Stop at this simulated second; requests not done end as unfinished "
                  "(default: run until every request is done)");
  run->add_flag("--trace-steps", options->trace_steps,
                "Also write /steps, one row per engine step");
  run->add_option("--rate-scale", options->rate_scale,
                  "Multiply the arrival rate (arrival times / scale)")
      ->capture_default_str();
  run->add_option("--duration", options->duration_s,
                  "Only requests arriving in the first S seconds (after scaling)");
  run->add_option("--num-reqs", options->num_requests, "At most this many requests");
  run->add_flag(
      "--skip-bad-lines", options->skip_bad_lines,
      "Skip malformed trace lines (counted in /provenance) instead of stopping at the first");
  run->add_flag("--no-request-rows", options->no_request_rows,
                "Skip /requests (one row per request); keep summaries and time series");
  run->add_option("--threads", options->threads, "TBB threads per MPI rank")->capture_default_str();
  run->add_option("--seed", options->seed, "Seed of the routers' random streams")
      ->capture_default_str();
  run->add_flag("--quiet", options->quiet, "Print nothing on success (no progress line either)");
  run->callback([options]() { Run(*options); });
}

}  // namespace fleetsim
