#include "app/sweep_command.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <utility>

#include "app/run_job.h"
#include "comm/error_agreement.h"
#include "comm/mpi_runtime.h"
#include "core/format.h"
#include "core/input_error.h"
#include "report/report_page.h"
#include "sweep/sweep_points.h"
#include "sweep/sweep_report.h"
#include "sweep/sweep_runner.h"
#include "sweep/sweep_spec.h"
#include "sweep/sweep_table.h"

namespace fleetsim {
namespace {

namespace fs = std::filesystem;

struct SweepOptions {
  std::string spec;
  std::optional<std::string> output_dir;
  std::optional<int> point;
  bool collect = false;
  bool list = false;
  int threads = 1;
  bool quiet = false;
  bool report = false;
  std::string command_line;
};

// A point's simulation, exactly as `fleetsim run` does it: request rows on, no progress
// line (ranks running different points would draw over each other).
PointJobRunner JobRunner(const SweepSpec& spec, const SweepOptions& options) {
  return [&spec, &options](const PointJob& point, MPI_Comm comm) {
    RunJob job;
    job.cluster = point.cluster;
    job.workload = spec.workload;
    job.format = spec.format;
    job.output = point.output;
    job.window.rate_scale = point.rate_scale;
    if (spec.duration_s) job.window.duration = SecondsToSimTime(*spec.duration_s);
    job.window.num_requests = spec.num_requests;
    job.fleet.seed = spec.seed;
    job.fleet.threads = options.threads;
    job.fleet.request_rows = true;
    job.fleet.progress = ProgressMode::kOff;
    job.command_line = options.command_line;
    const RunJobResult result = RunJobOn(job, comm);
    for (const output::SummaryRow& row : result.stats.summary) {
      if (std::strncmp(row.group, "fleet", sizeof row.group) == 0) return row;
    }
    return result.stats.summary.back();
  };
}

void Print(const std::string& text) {
  std::fputs(text.c_str(), stdout);
  std::fflush(stdout);
}

// Rank 0 alone: the aggregate from the points' files, written and printed.
void Collect(const SweepSpec& spec, const SweepPoints& sweep, const fs::path& dir,
             const SweepOptions& options) {
  const std::vector<SweepRow> rows = CollectSweep(spec, sweep.points, dir);
  WriteSweepCsv(dir / "sweep.csv", rows);
  WriteSweepHdf5(dir / "sweep.h5", rows, spec);
  if (!options.quiet) {
    Print(Ranking(rows, sweep.points, spec));
    Print("wrote " + (dir / "sweep.csv").string() + " and " + (dir / "sweep.h5").string() + "\n");
  }
  if (options.report) {
    // The sweep's page, with the best point's own run beside it (latency, load, time).
    report::ReportOptions page;
    page.files = {(dir / "sweep.h5").string()};
    for (const SweepRow& row : rows) {
      if (row.rank == 1)
        page.files.push_back(PointResultPath(dir, static_cast<int>(row.point)).string());
    }
    page.out_dir = (dir / "report").string();
    const report::ReportOutput out = report::WriteReport(page);
    for (const std::string& warning : out.warnings)
      std::fprintf(stderr, "fleetsim: warning: %s\n", warning.c_str());
    if (!options.quiet) Print("wrote " + out.page + "\n");
  }
}

// Runs one phase of the command on every rank: a failure is agreed on and printed by one
// rank (comm/error_agreement.h), and every rank exits with its code.
template <typename Fn>
void Phase(Fn&& fn) {
  comm::ReportFailures([&] { comm::OnEveryRank(MPI_COMM_WORLD, std::forward<Fn>(fn)); });
}

void Sweep(const SweepOptions& options) {
  comm::MpiRuntime mpi(nullptr, nullptr);
  const bool root = mpi.rank() == 0;
  // The spec is read identically on every rank, so every rank meets the same error; the
  // agreement lets rank 0 say it.
  std::optional<SweepSpec> loaded;
  SweepPoints sweep;
  Phase([&] {
    if (options.threads < 1) throw OptionError("--threads", "must be at least 1");
    if (options.point && options.collect)
      throw OptionError("--point", "not with --collect (run the points, then collect them)");
    if (options.list && (options.point || options.collect))
      throw OptionError("--list", "alone: not with --point or --collect");
    loaded = LoadSweepSpec(options.spec);
    sweep = ExpandPoints(*loaded);
    if (!options.list && sweep.points.empty()) {
      throw InputError(options.spec, 0, "gpu_budget",
                       "no points: every combination is skipped (" + sweep.skipped.front() + ")");
    }
    if (options.point &&
        (*options.point < 0 || *options.point >= static_cast<int>(sweep.points.size()))) {
      throw OptionError("--point", "no point " + std::to_string(*options.point) +
                                       ": the sweep has " + std::to_string(sweep.points.size()) +
                                       " (0-" + std::to_string(sweep.points.size() - 1) + ")");
    }
  });
  const SweepSpec& spec = *loaded;
  const fs::path dir = options.output_dir ? fs::path(*options.output_dir) : DefaultOutputDir(spec);
  const SweepLog log = [&options](const std::string& line) {
    if (!options.quiet) Print(line + "\n");
  };
  const SweepLog silent = [](const std::string&) {};

  if (options.list) {
    if (root) Print(PointList(sweep));
    return;
  }
  if (options.point) {
    // One point over every rank of this job (a Slurm array task is usually one rank), as
    // `fleetsim run` runs it.
    const SweepPoint& point = sweep.points[static_cast<std::size_t>(*options.point)];
    Phase([&] {
      RunPoint(spec, point, dir, JobRunner(spec, options), MPI_COMM_WORLD, root ? log : silent);
    });
    if (root && !options.quiet) {
      Print("wrote " + PointConfigPath(dir, point.index).string() + " and " +
            PointResultPath(dir, point.index).string() + "\n");
    }
    return;
  }
  if (!options.collect) {
    const auto start = std::chrono::steady_clock::now();
    if (root && !options.quiet) {
      Print("sweep " + spec.name + ": " + std::to_string(sweep.points.size()) + " point(s), " +
            std::string(SweepObjectiveName(spec.objective)) + ", on " + std::to_string(mpi.size()) +
            " rank(s) x " + std::to_string(options.threads) + " thread(s), into " + dir.string() +
            "\n");
      for (const std::string& skipped : sweep.skipped)
        Print("skipped: " + skipped + "\n");
    }
    // Only the rank that ran the lowest failing point holds its error; the others get
    // QuietExit from RunSweepPoints.
    Phase([&] {
      RunSweepPoints(spec, sweep.points, dir, JobRunner(spec, options), MPI_COMM_WORLD, log);
    });
    if (root && !options.quiet) {
      const double wall_s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      Print(std::to_string(sweep.points.size()) + " point(s) in " + Fixed(wall_s, 2) + " s wall\n");
    }
  }
  comm::ReportFailures(
      [&] { comm::OnRankZero(MPI_COMM_WORLD, [&] { Collect(spec, sweep, dir, options); }); });
}

}  // namespace

void AddSweepCommand(CLI::App& app, std::string command_line) {
  auto options = std::make_shared<SweepOptions>();
  options->command_line = std::move(command_line);
  CLI::App* cmd = app.add_subcommand(
      "sweep",
      "Run every point of a sweep spec (docs/SWEEPS.md), one HDF5 file each, and rank them in "
      "sweep.csv / sweep.h5");
  cmd->add_option("spec", options->spec, "The sweep spec (YAML)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--output-dir", options->output_dir,
                  "Folder for points/ and the aggregate (default: <spec folder>/out/<name>)");
  cmd->add_option("--point", options->point,
                  "Run only point K (0-based; e.g. $SLURM_ARRAY_TASK_ID): its config and HDF5 "
                  "file, no aggregate");
  cmd->add_flag("--collect", options->collect,
                "Only build sweep.csv and sweep.h5 from the points' existing files");
  cmd->add_flag("--list", options->list,
                "Print 'points: N', then one line per point (and the skipped combinations)");
  cmd->add_option("--threads", options->threads,
                  "ranks per MPI process, one per thread, for each point")
      ->capture_default_str();
  cmd->add_flag("--report", options->report,
                "Also write <output-dir>/report/report.html (fleetsim report of sweep.h5 and "
                "the best point's run)");
  cmd->add_flag("--quiet", options->quiet, "Print nothing on success");
  cmd->callback([options]() { Sweep(*options); });
}

}  // namespace fleetsim
