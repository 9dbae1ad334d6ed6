#include "app/run_command.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include "app/run_metrics.h"
#include "bundles/analytic_bundle.h"
#include "cluster/cluster_config.h"
#include "comm/mpi_runtime.h"
#include "core/project_paths.h"
#include "engine/engine_setup.h"
#include "model/model_catalog.h"
#include "output/hdf5_file.h"
#include "output/run_tables.h"
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
  double rate_scale = 1.0;
  std::optional<double> duration_s;
  std::optional<int64_t> num_requests;
  bool skip_bad_lines = false;
  bool quiet = false;
  std::string command_line;
};

// One engine instance of the fleet and where it belongs.
struct FleetInstance {
  int group;
  std::unique_ptr<Instance> engine;
  std::vector<output::StepRow> steps;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Builds each group's engine once, and its replicas.
std::vector<EngineSetup> BuildGroups(const ClusterConfig& cluster) {
  std::vector<EngineSetup> setups;
  const ModelCatalog catalog(ModelsDir());
  for (const InstanceGroupConfig& group : cluster.groups) {
    const SettingError error = [&](std::string_view setting, const std::string& message) {
      return InputError(group.file, group.line,
                        "instance_groups." + group.name + "." + std::string(setting), message);
    };
    ModelCard card = [&] {
      try {
        return catalog.Load(group.model);
      } catch (const InputError& e) {
        throw error("model", e.what());
      }
    }();
    // `analytic`: fleetsim's own bundle for this model and GPU, built once and cached.
    const std::string bundle = group.bundle == "analytic"
                                   ? CachedAnalyticBundle(card, *group.budget.hardware)
                                   : group.bundle;
    setups.push_back(
        BuildEngineSetup(std::move(card), LoadBundle(bundle), group.engine, group.budget,
                         static_cast<int64_t>(std::llround(group.step_overhead_us * 1000)), error));
  }
  return setups;
}

void Run(const RunOptions& options) {
  const auto wall_start = std::chrono::steady_clock::now();
  comm::MpiRuntime mpi(nullptr, nullptr);
  if (mpi.size() != 1) {
    throw OptionError("run", "multi-rank runs arrive with the fleet issue; run without mpirun");
  }
  const ClusterConfig cluster = LoadClusterConfig(options.cluster);
  const std::vector<EngineSetup> setups = BuildGroups(cluster);
  WindowOptions window;
  window.rate_scale = options.rate_scale;
  if (options.duration_s) window.duration = SecondsToSimTime(*options.duration_s);
  window.num_requests = options.num_requests;
  window.skip_bad_lines = options.skip_bad_lines;
  auto source =
      std::make_unique<WorkloadWindow>(OpenWorkload(options.workload, options.format), window);
  // Fail on a bad output path before simulating anything.
  output::Hdf5File file(options.output, MPI_COMM_WORLD);

  std::vector<FleetInstance> fleet;
  for (std::size_t g = 0; g < setups.size(); ++g) {
    for (int r = 0; r < cluster.groups[g].replicas; ++r) {
      fleet.push_back({static_cast<int>(g), setups[g].MakeInstance(), {}});
    }
  }
  if (options.trace_steps) {
    for (std::size_t i = 0; i < fleet.size(); ++i) {
      FleetInstance& instance = fleet[i];
      instance.engine->OnStep([&instance, i](const StepRecord& s) {
        instance.steps.push_back({static_cast<int32_t>(i), 0, s.start, s.duration, s.prefill_tokens,
                                  s.prefill_chunks, s.decodes, s.preemptions, s.cache_hit_tokens,
                                  s.running, s.waiting, s.kv_usage});
      });
    }
  }

  // Requests go round-robin over the instances, in arrival order; instances advance to
  // each arrival before it is handed over, so only active requests are held.
  const SimTime horizon = options.horizon_s ? SecondsToSimTime(*options.horizon_s) : kNever;
  int64_t next_id = 0;
  while (auto r = source->Next()) {
    FleetInstance& target = fleet[static_cast<std::size_t>(next_id) % fleet.size()];
    const EngineSetup& setup = setups[static_cast<std::size_t>(target.group)];
    auto request = std::make_unique<Request>();
    request->id = next_id;
    request->name = r->id;
    request->prompt_tokens = r->input_tokens;
    request->max_output_tokens = r->output_tokens;
    if (r->hash_block_size > 0) {
      const std::vector<uint64_t> hashes = MapBlockHashes(*r, setup.layout.block_size);
      request->prompt_block_hashes.assign(hashes.begin(), hashes.end());
    }
    for (FleetInstance& instance : fleet)
      instance.engine->RunUntil(std::min(r->arrival, horizon));
    target.engine->Arrive(std::move(request), r->arrival);
    ++next_id;
  }
  int64_t steps = 0;
  for (FleetInstance& instance : fleet) {
    instance.engine->RunUntil(horizon);
    instance.engine->FlushPending();
    steps += instance.engine->steps();
  }

  // Results, by request id.
  std::vector<output::RequestRow> requests(static_cast<std::size_t>(next_id));
  std::vector<output::InstanceRow> instances;
  std::vector<SummaryBuilder> groups;
  for (const InstanceGroupConfig& g : cluster.groups)
    groups.emplace_back(g.name);
  SummaryBuilder fleet_summary("fleet");
  int64_t out_of_grid = 0;
  for (std::size_t i = 0; i < fleet.size(); ++i) {
    const Instance& engine = *fleet[i].engine;
    const EngineSetup& setup = setups[static_cast<std::size_t>(fleet[i].group)];
    output::InstanceRow row{};
    row.id = static_cast<int32_t>(i);
    row.tp = setup.engine.tp;
    output::CopyName(row.group, cluster.groups[static_cast<std::size_t>(fleet[i].group)].name);
    output::CopyName(row.hardware,
                     cluster.groups[static_cast<std::size_t>(fleet[i].group)].hardware);
    output::CopyName(row.model, setup.card.name);
    row.block_size = setup.layout.block_size;
    row.pool_blocks = setup.num_blocks;
    row.steps = engine.steps();
    row.busy_ns = engine.busy_time();
    for (const RequestRecord& record : engine.records()) {
      const output::RequestRow request = RequestRowOf(record, static_cast<int>(i));
      requests[static_cast<std::size_t>(record.id)] = request;
      groups[static_cast<std::size_t>(fleet[i].group)].Add(request, cluster.slo);
      fleet_summary.Add(request, cluster.slo);
      ++row.requests;
      row.prompt_tokens += record.input_tokens;
      row.output_tokens += record.output_tokens;
      row.preemptions += record.preemptions;
      row.prefix_hit_tokens += record.cached_tokens;
    }
    instances.push_back(row);
  }
  for (const EngineSetup& setup : setups)
    out_of_grid += setup.cost->OutOfGridLookups();
  std::vector<output::SummaryRow> summary;
  for (const SummaryBuilder& g : groups)
    summary.push_back(g.Build());
  summary.push_back(fleet_summary.Build());

  const auto count = [](const auto& rows) { return static_cast<int64_t>(rows.size()); };
  file.WriteTable("/requests", output::RequestSchema(), requests.data(), 0, count(requests),
                  count(requests));
  file.WriteTable("/instances", output::InstanceSchema(), instances.data(), 0, count(instances),
                  count(instances));
  file.WriteTable("/summary", output::SummarySchema(), summary.data(), 0, count(summary),
                  count(summary));
  if (options.trace_steps) {
    std::vector<output::StepRow> all;
    for (const FleetInstance& instance : fleet)
      all.insert(all.end(), instance.steps.begin(), instance.steps.end());
    file.WriteTable("/steps", output::StepSchema(), all.data(), 0, count(all), count(all));
  }
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  file.WriteAttribute("/provenance", "fleetsim_version", std::string(FLEETSIM_VERSION));
  file.WriteAttribute("/provenance", "command_line", options.command_line);
  file.WriteAttribute("/provenance", "cluster_config_path", options.cluster);
  file.WriteAttribute("/provenance", "cluster_config", ReadFile(options.cluster));
  file.WriteAttribute("/provenance", "workload_path", options.workload);
  file.WriteAttribute("/provenance", "workload_format", source->format());
  file.WriteAttribute("/provenance", "skipped_bad_lines", source->skipped_lines());
  file.WriteAttribute("/provenance", "rate_scale", options.rate_scale);
  std::string bundles;
  for (const InstanceGroupConfig& g : cluster.groups)
    bundles += g.name + "=" + g.bundle + "\n";
  file.WriteAttribute("/provenance", "bundles", bundles);
  file.WriteAttribute("/provenance", "ranks", int64_t{mpi.size()});
  file.WriteAttribute("/provenance", "threads", int64_t{1});
  file.WriteAttribute("/provenance", "placement", std::string("all instances on rank 0, thread 0"));
  file.WriteAttribute("/provenance", "steps", steps);
  file.WriteAttribute("/provenance", "out_of_grid_lookups", out_of_grid);
  file.WriteAttribute("/provenance", "wall_time_s", wall_s);
  file.Commit();

  if (!options.quiet) {
    PrintSummary(summary);
    std::printf(
        "%lld requests, %lld engine steps, %lld out-of-grid table lookups, %.2f s wall; wrote %s\n",
        static_cast<long long>(next_id), static_cast<long long>(steps),
        static_cast<long long>(out_of_grid), wall_s, options.output.c_str());
  }
}

}  // namespace

void AddRunCommand(CLI::App& app, std::string command_line) {
  auto options = std::make_shared<RunOptions>();
  options->command_line = std::move(command_line);
  CLI::App* run = app.add_subcommand(
      "run", "Simulate a cluster config's instances serving a workload; results in one HDF5 file");
  options->cluster =
      (ProjectRoot() / "cluster_configs" / "single_node_hybrid_instance.yaml").string();
  options->workload =
      (ProjectRoot() / "runs" / "examples" / "shared_prefix_sessions.jsonl").string();
  run->add_option("--cluster", options->cluster,
                  "Cluster config (default: the bundled single_node_hybrid_instance.yaml)")
      ->check(CLI::ExistingFile);
  run->add_option("--workload", options->workload,
                  "Trace: native JSONL, or a vLLM-bench requests.jsonl (default: the bundled "
                  "runs/examples/shared_prefix_sessions.jsonl)")
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
  run->add_flag("--quiet", options->quiet, "Print nothing on success");
  run->callback([options]() { Run(*options); });
}

}  // namespace fleetsim
