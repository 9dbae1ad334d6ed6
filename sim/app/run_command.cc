#include "app/run_command.h"

#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "app/dry_run.h"
#include "app/interrupt.h"
#include "app/run_job.h"
#include "app/run_summary.h"
#include "comm/error_agreement.h"
#include "comm/mpi_runtime.h"
#include "core/project_paths.h"
#include "fleet/fleet_metrics.h"
#include "workload/trace_catalog.h"

namespace fleetsim {
namespace {

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
  std::string model;
  bool strict_models = false;
  int threads = 1;
  uint64_t seed = 0;
  bool quiet = false;
  bool json = false;
  bool dry_run = false;
  std::string progress = "auto";
  bool list_traces = false;
  std::string checkpoint;
  std::optional<double> checkpoint_every_s;
  std::string restart;
  std::string command_line;
};

RunJob JobOf(const RunOptions& options) {
  if (options.threads < 1) throw OptionError("--threads", "must be at least 1");
  RunJob job;
  job.cluster = options.cluster;
  job.workload = options.workload;
  job.format = options.format;
  job.output = options.output;
  job.window.rate_scale = options.rate_scale;
  if (options.duration_s) job.window.duration = OptionSimTime("--duration", *options.duration_s);
  job.window.num_requests = options.num_requests;
  job.window.skip_bad_lines = options.skip_bad_lines;
  job.window.default_model = options.model;
  job.strict_models = options.strict_models;
  job.fleet.seed = options.seed;
  job.fleet.threads = options.threads;
  if (options.horizon_s) job.fleet.horizon = OptionSimTime("--horizon", *options.horizon_s);
  job.fleet.trace_steps = options.trace_steps;
  job.fleet.request_rows = !options.no_request_rows;
  // fleet/progress.h says what each mode writes on a terminal and into a log.
  job.fleet.progress = options.quiet || options.progress == "never" ? ProgressMode::kOff
                       : options.progress == "always"               ? ProgressMode::kAlways
                                                                    : ProgressMode::kAuto;
  if (!options.checkpoint.empty()) {
    if (!options.checkpoint_every_s)
      throw OptionError("--checkpoint", "needs --checkpoint-every (simulated seconds)");
    job.fleet.checkpoint.dir = options.checkpoint;
    job.fleet.checkpoint.every = OptionSimTime("--checkpoint-every", *options.checkpoint_every_s);
    if (job.fleet.checkpoint.every <= 0)
      throw OptionError("--checkpoint-every", "must be a positive number of simulated seconds");
  } else if (options.checkpoint_every_s) {
    throw OptionError("--checkpoint-every", "needs --checkpoint DIR");
  }
  job.fleet.checkpoint.restart = options.restart;
  job.fleet.interrupted = PendingInterrupt;
  job.begin_commit = BeginCommit;
  job.command_line = options.command_line;
  return job;
}

void PrintResult(const RunOptions& options, const RunJobResult& result, int ranks) {
  const FleetRunStats& stats = result.stats;
  if (options.json) {
    WriteRunJson(std::cout,
                 {options.output, result.instances, ranks, options.threads, result.wall_s}, stats);
    return;
  }
  PrintSummaryTable(stats.summary, stdout);
  // Ranks that wait long for one another at the windows' meetings gain little from more of
  // them (bench/RESULTS.md, "Two ranks wait for each other").
  std::string meetings;
  if (ranks * options.threads > 1 && result.wall_s > 0) {
    meetings = ", " + std::to_string(std::lround(100 * stats.meeting_time_s / result.wall_s)) +
               " % of it in the ranks' meetings";
  }
  std::printf(
      "%lld requests on %zu instances, %lld engine steps, %lld events (%.3g/s), %lld "
      "windows, %lld out-of-grid lookups; %d process(es) x %d thread(s), each a rank, %.2f s "
      "wall%s\nwrote %s\n",
      static_cast<long long>(stats.requests), result.instances, static_cast<long long>(stats.steps),
      static_cast<long long>(stats.events), static_cast<double>(stats.events) / result.wall_s,
      static_cast<long long>(stats.windows), static_cast<long long>(stats.out_of_grid), ranks,
      options.threads, result.wall_s, meetings.c_str(), options.output.c_str());
}

void Run(const RunOptions& options) {
  if (options.list_traces) {
    std::printf("traces in %s:\n", TracesDir().c_str());
    for (const std::string& name : TraceNames())
      std::printf("  %s\n", name.c_str());
    return;
  }
  comm::MpiRuntime mpi(nullptr, nullptr);
  // SIGINT and SIGTERM stop the run at its next window boundary (mpirun passes them on to
  // every rank), before MPI_Finalize; rank 0 removes the unfinished file (the output's name
  // and .tmp, as Hdf5File writes it) and prints the line at once (interrupt.h says why).
  const InterruptHandlers interrupt_handlers(mpi.rank() == 0 ? options.output + ".tmp" : "",
                                             mpi.rank() == 0);
  try {
    comm::ReportFailures([&] {
      // The options are checked alike on every rank; the agreement lets one say so.
      RunJob job;
      comm::OnEveryRank(MPI_COMM_WORLD, [&] { job = JobOf(options); });
      if (options.dry_run) {
        comm::OnRankZero(MPI_COMM_WORLD, [&] { PrintDryRun(job, stdout); });
        return;
      }
      const RunJobResult result = RunJobOn(job, MPI_COMM_WORLD);
      if ((options.json || !options.quiet) && mpi.rank() == 0)
        PrintResult(options, result, mpi.size());
    });
  } catch (const FleetInterrupted& e) {
    // The handler printed the line, unless the signal came to another rank only.
    if (mpi.rank() == 0 && !InterruptAnnounced()) {
      std::fprintf(stderr, "fleetsim: interrupted (%s); no output written\n", SignalName(e.signal));
      std::fflush(stderr);
    }
    throw QuietExit{128 + e.signal};
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
  run->add_option(
      "--workload", options->workload,
      "Workload: a trace file (native JSONL, vLLM-bench, Azure, Vidur, Mooncake), a real "
      "trace by name (e.g. conversation_trace; see fleetsim run --list-traces), or a "
      "generator spec (default: runs/examples/default_fleet_traffic.yaml)");
  run->add_option("--format", options->format,
                  "Workload format: auto (detected), native, vllm-bench, azure, vidur, mooncake, "
                  "or generator")
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
  run->add_option("--model", options->model,
                  "The model of requests that name none (a served model name); without it they "
                  "may go to any instance group");
  run->add_flag("--strict-models", options->strict_models,
                "A request naming a model no instance group serves is a bad input line (skipped "
                "and counted with --skip-bad-lines) instead of ending rejected with no_model");
  run->add_flag("--no-request-rows", options->no_request_rows,
                "Skip /requests (one row per request); keep summaries and time series");
  run->add_option("--threads", options->threads,
                  "ranks per MPI process, one per thread (the same results as that many MPI ranks)")
      ->capture_default_str();
  run->add_option("--seed", options->seed, "Seed of the routers' random streams")
      ->capture_default_str();
  run->add_option("--checkpoint", options->checkpoint,
                  "Write a checkpoint into this directory at window boundaries (with "
                  "--checkpoint-every; docs/CHECKPOINT.md)");
  run->add_option("--checkpoint-every", options->checkpoint_every_s,
                  "Simulated seconds between checkpoints (at the first window boundary past each "
                  "multiple)");
  run->add_option("--restart", options->restart,
                  "Continue from the checkpoint in this directory, with the arguments of the run "
                  "that wrote it, to the same tables as the uninterrupted run");
  run->add_flag("--list-traces", options->list_traces,
                "Print the names of the real traces --workload accepts, and exit");
  run->add_flag("--quiet", options->quiet, "Print nothing on success (no progress line either)");
  run->add_flag("--json", options->json,
                "Print the summary as one JSON object on stdout instead of the table");
  run->add_flag("--dry-run", options->dry_run,
                "Print the placement, bundles, KV capacity, routing, windows and workload, "
                "and exit without simulating");
  run->add_option("--progress", options->progress,
                  "Progress on stderr: auto (a redrawn line on a terminal; into a log or a Slurm "
                  "job's output, a plain line every 60 s), always (into a log: a line at the "
                  "start, every 10 s and at the end), never")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "always", "never"}));
  run->callback([options]() { Run(*options); });
}

}  // namespace fleetsim
