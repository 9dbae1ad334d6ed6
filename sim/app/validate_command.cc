#include "app/validate_command.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

#include "app/collectives_text.h"
#include "app/validate_series.h"
#include "comm/error_agreement.h"
#include "comm/mpi_runtime.h"
#include "core/json_writer.h"
#include "core/project_paths.h"
#include "core/stats.h"
#include "core/yaml_section.h"
#include "engine/dp_setup.h"
#include "engine/engine_setup.h"
#include "model/model_catalog.h"
#include "workload/vllm_bench_reader.h"
#include "workload/vllm_bench_series.h"

namespace fleetsim {
namespace {

namespace fs = std::filesystem;

struct ValidateOptions {
  std::string run_dir;
  std::string bundle;
  std::string model;
  std::optional<std::string> hardware;
  double step_overhead_us = engine_settings::kStepOverheadUs.Default();
  bool json = false;
  std::optional<std::string> requests_csv;  // per-request simulated and measured latencies
  std::optional<std::string> series_csv;    // per-tick simulated and measured series
};

// Mean, median and P90.
struct Stats {
  double mean = 0, median = 0, p90 = 0;
};

Stats Summarize(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return Stats{Mean(values), Quantile(values, 0.5), Quantile(values, 0.9)};
}

struct Latencies {
  std::vector<double> ttft, tpot, e2e;
  void Add(double arrival, double first, double last, int64_t outputs) {
    ttft.push_back(first - arrival);
    tpot.push_back((last - first) / static_cast<double>(std::max<int64_t>(1, outputs - 1)));
    e2e.push_back(last - arrival);
  }
};

// One row per request, in the run's order, so a user can see which requests the error
// comes from (e.g. those that queued) rather than only the summary.
// `requests` are the simulated records in that order, `ranks` their DP ranks (empty: one
// engine).
void WriteRequestsCsv(const std::string& path, const std::vector<const RequestRecord*>& requests,
                      const std::vector<int32_t>& ranks, const Latencies& sim,
                      const Latencies& real) {
  std::FILE* file = std::fopen(path.c_str(), "w");
  if (!file) throw OptionError("--requests-csv", path + ": cannot be written");
  std::fprintf(file,
               "request,arrival_s,input_tokens,output_tokens,dp_rank,ttft_sim_s,ttft_measured_s,"
               "tpot_sim_s,tpot_measured_s,e2e_sim_s,e2e_measured_s,preemptions_sim\n");
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const RequestRecord& r = *requests[i];
    std::fprintf(file, "%s,%.6f,%lld,%lld,%d,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%lld\n", r.name.c_str(),
                 ToSeconds(r.arrival), static_cast<long long>(r.input_tokens),
                 static_cast<long long>(r.output_tokens), ranks.empty() ? 0 : ranks[i], sim.ttft[i],
                 real.ttft[i], sim.tpot[i], real.tpot[i], sim.e2e[i], real.e2e[i],
                 static_cast<long long>(r.preemptions));
  }
  if (std::fclose(file) != 0) throw OptionError("--requests-csv", path + ": write failed");
}

InputError MetaError(const std::string& file, std::string_view setting,
                     const std::string& message) {
  return InputError(file, 0, std::string(setting), message);
}

// The run's engine settings, by vLLM's names (which the engine's declarations use).
EngineConfig EngineConfigFrom(const YamlSection& meta) {
  using namespace engine_settings;
  EngineConfig config;
  const YamlSection kwargs = meta.Child("engine_kwargs");
  config.tensor_parallel_size = kTensorParallelSize.Read(kwargs);
  config.max_num_seqs = kMaxNumSeqs.Find(kwargs);
  config.max_num_batched_tokens = kMaxNumBatchedTokens.Find(kwargs);
  config.max_model_len = kMaxModelLen.Find(kwargs);
  if (auto cache = meta.FindChild("kv_cache")) {
    config.block_size = kBlockSize.Find(*cache);
    config.enable_prefix_caching = kEnablePrefixCaching.Find(*cache);
  }
  // As the run asked (engine_kwargs) or resolved it (resolved_config); else vLLM's default.
  std::optional<bool> async = kAsyncScheduling.Find(kwargs);
  if (auto resolved = meta.FindChild("resolved_config"); resolved && !async) {
    if (auto scheduler = resolved->FindChild("scheduler_config"))
      async = kAsyncScheduling.Find(*scheduler);
  }
  config.async_scheduling = async.value_or(kAsyncScheduling.Default());
  return config;
}

// Where a data-parallel replay's lock-steps spent their time (engine/dp_engine.h).
struct LockStepTotals {
  int64_t steps = 0, all_idle = 0, rooted = 0;
  std::vector<int64_t> requests_per_rank;  // as the front end split them
  double rank_s = 0, moe_s = 0, masked_s = 0, exchange_s = 0, rooted_exchange_s = 0;
  void Add(const DpStepRecord& step) {
    ++steps;
    if (step.busy_ranks == 0) ++all_idle;
    if (step.timing.rooted_exchange) {
      ++rooted;
      rooted_exchange_s += ToSeconds(step.timing.exchange_ns);
    }
    rank_s += ToSeconds(step.timing.slowest_rank_ns);
    moe_s += ToSeconds(step.timing.moe_ns);
    masked_s += ToSeconds(step.timing.masked_ns);
    exchange_s += ToSeconds(step.timing.exchange_ns);
  }
  void Print(int dp) const {
    const double n = std::max<double>(1, static_cast<double>(steps));
    std::printf(
        "data parallel: %d ranks, %lld lock-steps (%lld only dummy batches); per step: slowest "
        "rank without MoE %.3f ms, expert shard %.3f ms (%.3f ms of it the rows of other ranks' "
        "experts), dispatch + combine %.3f ms\n",
        dp, static_cast<long long>(steps), static_cast<long long>(all_idle), 1e3 * rank_s / n,
        1e3 * moe_s / n, 1e3 * masked_s / n, 1e3 * exchange_s / n);
    std::printf(
        "unequal token counts (a rank eager): %lld lock-steps, their dispatch + combine rooted "
        "broadcasts and reduces, %.3f ms each\n",
        static_cast<long long>(rooted),
        1e3 * rooted_exchange_s / std::max<double>(1, static_cast<double>(rooted)));
    std::printf("requests per DP rank:");
    for (int64_t r : requests_per_rank)
      std::printf(" %lld", static_cast<long long>(r));
    std::printf("\n");
  }
};

double Signed(double simulated, double measured) {
  return measured == 0 ? 0 : (simulated - measured) / measured;
}

// The replay's preemptions, which a vLLM-bench run does not record: in all, and the
// requests preempted at least once.
struct Preemptions {
  int64_t total = 0, requests = 0;
};

// The node a replay of several GPUs prices its collectives on, in `bundle collectives`'
// words: the catalog entry's layout unless --hardware names a copy with another.
struct CollectivePath {
  int gpus = 0;
  std::string hardware, node, transport;
};

std::optional<CollectivePath> CollectivePathOf(const std::optional<HardwareSpec>& hardware,
                                               int gpus) {
  if (!hardware) return std::nullopt;
  std::optional<std::string> transport = GroupTransportText(*hardware, gpus);
  if (!transport) return std::nullopt;
  return CollectivePath{gpus, hardware->name, NodeText(*hardware), std::move(*transport)};
}

void Report(const ValidateOptions& options, const Latencies& sim, const Latencies& real,
            const std::optional<SeriesComparison>& series, int64_t requests, int64_t num_blocks,
            int64_t out_of_grid, const Preemptions& preempted,
            const std::optional<CollectivePath>& collectives) {
  const std::pair<const char*, const std::vector<double>*> metrics[] = {
      {"ttft", &sim.ttft}, {"tpot", &sim.tpot}, {"e2e", &sim.e2e}};
  const std::vector<double>* measured[] = {&real.ttft, &real.tpot, &real.e2e};
  if (options.json) {
    JsonWriter json(std::cout);
    json.BeginObject();
    json.Field("run", options.run_dir);
    json.Field("bundle", options.bundle);
    json.Field("requests", requests);
    json.Field("num_gpu_blocks", num_blocks);
    json.Field("step_overhead_us", options.step_overhead_us);
    json.Field("out_of_grid_lookups", out_of_grid);
    json.Field("preemptions_sim", preempted.total);
    json.Field("preempted_requests_sim", preempted.requests);
    if (collectives) {
      json.Key("collectives");
      json.BeginObject();
      json.Field("gpus", static_cast<int64_t>(collectives->gpus));
      json.Field("hardware", collectives->hardware);
      json.Field("node", collectives->node);
      json.Field("transport", collectives->transport);
      json.EndObject();
    }
    for (std::size_t m = 0; m < 3; ++m) {
      const Stats s = Summarize(*metrics[m].second);
      const Stats r = Summarize(*measured[m]);
      json.Key(metrics[m].first);
      json.BeginObject();
      for (auto [name, sv, rv] :
           {std::tuple{"mean", s.mean, r.mean}, std::tuple{"median", s.median, r.median},
            std::tuple{"p90", s.p90, r.p90}}) {
        json.Key(name);
        json.BeginObject();
        json.Field("simulated_s", sv);
        json.Field("measured_s", rv);
        json.Field("error", Signed(sv, rv));
        json.EndObject();
      }
      json.EndObject();
    }
    json.Key("series");
    json.BeginObject();
    json.Field("points", series ? static_cast<int64_t>(series->rows.size()) : 0);
    if (series) {
      json.Field("tick_s", series->tick_s);
      json.Field("origin_lead_s", series->origin.lead_s);
      json.Field("origin_from_prompt_column", series->origin.from_prompt_column);
      json.Field("prompt_mismatch", series->origin.prompt_mismatch);
      json.Field("running_mae", series->running.mae);
      json.Field("running_measured_mean", series->running.measured_mean);
      json.Field("waiting_mae", series->waiting.mae);
      json.Field("waiting_measured_mean", series->waiting.measured_mean);
      json.Field("kv_cache_unrecorded", series->kv_cache_unrecorded);
      for (auto [name, error] : {std::pair{"output_tokens_per_s", &series->outputs},
                                 std::pair{"prompt_tokens_per_s", &series->prompts},
                                 std::pair{"kv_cache_pct", &series->kv_cache}}) {
        if (!*error) continue;
        json.Field(std::string(name) + "_mae", (*error)->mae);
        json.Field(std::string(name) + "_measured_mean", (*error)->measured_mean);
      }
    }
    json.EndObject();
    json.EndObject();
    return;
  }
  std::printf("validate %s  (%lld requests, %lld KV blocks, bundle %s)\n", options.run_dir.c_str(),
              static_cast<long long>(requests), static_cast<long long>(num_blocks),
              options.bundle.c_str());
  std::printf("%-6s %-7s %12s %12s %9s\n", "metric", "stat", "simulated", "measured", "error");
  for (std::size_t m = 0; m < 3; ++m) {
    const Stats s = Summarize(*metrics[m].second);
    const Stats r = Summarize(*measured[m]);
    for (auto [name, sv, rv] :
         {std::tuple{"mean", s.mean, r.mean}, std::tuple{"median", s.median, r.median},
          std::tuple{"p90", s.p90, r.p90}}) {
      std::printf("%-6s %-7s %11.4fs %11.4fs %+8.1f%%\n", metrics[m].first, name, sv, rv,
                  100 * Signed(sv, rv));
    }
  }
  if (!series) {
    std::printf("series: the run has no timeseries.csv\n");
  } else {
    std::printf(
        "running: mean abs error %.2f requests (measured mean %.2f) over %zu ticks of %g s\n",
        series->running.mae, series->running.measured_mean, series->rows.size(), series->tick_s);
    std::printf("waiting: mean abs error %.2f requests (measured mean %.2f)\n", series->waiting.mae,
                series->waiting.measured_mean);
    for (auto [name, error] :
         {std::pair{"output", &series->outputs}, std::pair{"prompt", &series->prompts}}) {
      if (*error) {
        std::printf("%s tokens: mean abs error %.0f per s (measured mean %.0f per s)\n", name,
                    (*error)->mae, (*error)->measured_mean);
      }
    }
    if (series->kv_cache) {
      std::printf("kv cache: mean abs error %.2f points of usage (measured mean %.2f %%)\n",
                  series->kv_cache->mae, series->kv_cache->measured_mean);
    } else if (series->kv_cache_unrecorded) {
      std::printf("kv cache: not recorded (the run's kv_cache_pct is 0 at every tick)\n");
    }
    if (series->origin.from_prompt_column) {
      std::printf(
          "series clock: ticks counted from %.3f s before the first request's intake, where the "
          "run's prompt counts meet its first tokens (%.1f %% of prompt tokens in another tick)\n",
          series->origin.lead_s, 100 * series->origin.prompt_mismatch);
    }
  }
  std::printf(
      "preemptions: %lld in the replay, of %lld requests (the run does not record its own)\n",
      static_cast<long long>(preempted.total), static_cast<long long>(preempted.requests));
  std::printf("out-of-grid table lookups: %lld\n", static_cast<long long>(out_of_grid));
  if (collectives) {
    std::printf(
        "collectives: %d GPUs of one %s node (%s): NCCL goes %s (the --hardware entry's "
        "layout; for another, pass a copy of it with its node section edited)\n",
        collectives->gpus, collectives->hardware.c_str(), collectives->node.c_str(),
        collectives->transport.c_str());
  }
}

void Validate(const ValidateOptions& options) {
  const fs::path dir(options.run_dir);
  const std::string meta_file = (dir / "meta.json").string();
  const YamlSection meta = LoadYamlFile(meta_file);
  const EngineConfig config = EngineConfigFrom(meta);
  // The run's per-tick series, read before the replay so a bad file fails at once.
  const std::string series_file = (dir / "timeseries.csv").string();
  std::optional<std::vector<VllmBenchTick>> ticks;
  if (fs::exists(series_file)) ticks = ReadVllmBenchSeries(series_file);
  if (options.series_csv && !ticks) {
    throw OptionError("--series-csv", options.run_dir + " has no timeseries.csv to compare with");
  }
  const double tick_s = meta.GetOr<double>("tick_seconds", 1.0);
  if (!(tick_s >= 1e-3 && tick_s <= kMaxSimSeconds))
    meta.Fail("tick_seconds", "must be between 0.001 and 1e9 s");

  KvBudget budget;
  if (auto cache = meta.FindChild("kv_cache")) {
    budget.num_blocks = engine_settings::kNumGpuBlocks.Find(*cache);
    budget.gpu_memory_utilization = engine_settings::kGpuMemoryUtilization.Read(*cache);
  }
  if (options.hardware) budget.hardware = LoadHardware(HardwareCatalogDir(), *options.hardware);
  if (!budget.num_blocks && !budget.hardware) {
    throw OptionError("--hardware", meta_file +
                                        " has no kv_cache.num_gpu_blocks: give --hardware "
                                        "to size the KV cache from the GPU");
  }
  engine_settings::kStepOverheadUs.Check(
      options.step_overhead_us,
      [](std::string_view, const std::string& m) { return OptionError("--step-overhead-us", m); });
  const int64_t step_overhead = StepOverheadNs(options.step_overhead_us);
  ModelCard card = ModelCatalog(ModelsDir()).Load(options.model);
  Bundle bundle = LoadBundle(options.bundle, config.tensor_parallel_size);
  for (const std::string& mismatch :
       BundleMismatches(bundle, card.name, budget.hardware ? budget.hardware->name : ""))
    std::fprintf(stderr, "fleetsim: warning: %s\n", mismatch.c_str());
  // Data parallelism with expert parallelism: one engine per DP rank in lock-step
  // (engine/dp_engine.h), the requests split over them as vLLM's front end splits them.
  const YamlSection kwargs = meta.Child("engine_kwargs");
  const int dp = kwargs.GetOr<int>("data_parallel_size", 1);
  if (dp < 1) kwargs.Fail("data_parallel_size", "must be at least 1");
  const bool expert_parallel = kwargs.GetOr<bool>("enable_expert_parallel", false);
  if (auto why = DpExpertParallelViolation(card, dp, expert_parallel))
    kwargs.Fail(expert_parallel ? "data_parallel_size" : "enable_expert_parallel", *why);
  if (dp > 1 && !budget.hardware) {
    throw OptionError("--hardware",
                      "a data-parallel run needs --hardware for its expert "
                      "dispatch collectives");
  }
  if (dp > 1) budget = DpExpertParallelKvBudget(card, config.tensor_parallel_size, dp, budget);
  const EngineSetup setup =
      BuildEngineSetup(std::move(card), std::move(bundle), config, budget, step_overhead,
                       [&](std::string_view setting, const std::string& message) {
                         return MetaError(meta_file, setting, message);
                       });
  SimulatedSeries series;
  series.async_scheduling = config.async_scheduling;
  LockStepTotals lock_steps;
  std::unique_ptr<Instance> instance;
  std::unique_ptr<DpEngine> dp_engine;
  if (dp > 1) {
    const int64_t capture =
        kwargs.GetOr<bool>("enforce_eager", false)
            ? 0
            : DefaultCudagraphCaptureTokens(setup.engine.max_num_seqs,
                                            setup.engine.max_num_batched_tokens);
    dp_engine = MakeDpEngine(setup, dp, *budget.hardware, capture);
    dp_engine->RecordScheduledState(true);
    lock_steps.requests_per_rank.assign(static_cast<std::size_t>(dp), 0);
    dp_engine->OnStep([&](const DpStepRecord& step) {
      series.AddStep(step.start, step.start + step.timing.total_ns,
                     {step.scheduled_running, step.scheduled_waiting, step.scheduled_kv_usage},
                     {step.running, step.waiting, step.kv_usage});
      lock_steps.Add(step);
    });
    dp_engine->OnRankStep([&](int, const StepRecord& step) {
      series.outputs.push_back({step.start + step.duration, step.generated_tokens});
    });
  } else {
    instance = setup.MakeInstance();
    instance->RecordScheduledState(true);
    instance->OnStep([&](const StepRecord& step) {
      series.AddStep(step.start, step.start + step.duration,
                     {step.scheduled_running, step.scheduled_waiting, step.scheduled_kv_usage},
                     {step.running, step.waiting, step.kv_usage});
      series.outputs.push_back({step.start + step.duration, step.generated_tokens});
    });
  }

  VllmBenchReader reader((dir / "requests.jsonl").string());
  Latencies real;
  std::vector<FirstToken> first_tokens;  // the run's, to find its series' clock
  std::optional<double> origin;
  int64_t count = 0;
  while (auto r = reader.Next()) {
    if (!origin) origin = r->queued_s;
    real.Add(r->queued_s, r->first_token_s, r->last_token_s, r->output_tokens);
    first_tokens.push_back({r->first_token_s - *origin, r->input_tokens});
    auto request = std::make_unique<Request>();
    request->id = count++;
    request->name = r->id;
    request->prompt_tokens = r->input_tokens;
    request->max_output_tokens = r->output_tokens;
    const SimTime arrival = ArrivalAfter(*r, *origin, reader.path());
    if (dp_engine) {
      dp_engine->Arrive(std::move(request), arrival);
    } else {
      instance->Arrive(std::move(request), arrival);
    }
  }
  std::vector<RequestRecord> records;
  std::vector<int32_t> ranks;
  if (dp_engine) {
    dp_engine->RunUntil(kNever);
    records = dp_engine->TakeRecords(&ranks);
    for (const int32_t rank : ranks)
      ++lock_steps.requests_per_rank[static_cast<std::size_t>(rank)];
  } else {
    instance->RunUntil(kNever);
    records = instance->TakeRecords();
  }
  if (static_cast<int64_t>(records.size()) != count) {
    throw InputError(dir.string(), 0, "requests",
                     std::to_string(count - static_cast<int64_t>(records.size())) +
                         " requests did not settle in the simulation");
  }

  // In the run's order (records settle in finish order), so row i matches measured row i.
  std::vector<std::size_t> order(records.size());
  for (std::size_t i = 0; i < records.size(); ++i)
    order[static_cast<std::size_t>(records[i].id)] = i;
  Latencies sim;
  Preemptions preempted;
  std::vector<const RequestRecord*> in_order;
  std::vector<int32_t> rank_of;
  for (const std::size_t i : order) {
    const RequestRecord& r = records[i];
    if (r.state != RequestState::kFinished) {
      throw InputError(dir.string(), 0, r.name,
                       "request did not finish in the simulation (" +
                           std::string(NameOf(r.reject_reason)) + ")");
    }
    // From the engine's intake, as the run's queued_ts is (RequestRecord::queued).
    sim.Add(ToSeconds(r.queued), ToSeconds(r.first_token), ToSeconds(r.finish), r.output_tokens);
    in_order.push_back(&r);
    preempted.total += r.preemptions;
    preempted.requests += r.preemptions > 0 ? 1 : 0;
    if (!ranks.empty()) rank_of.push_back(ranks[i]);
    series.prompts.push_back({r.first_token, r.input_tokens});
  }
  if (options.requests_csv) {
    WriteRequestsCsv(*options.requests_csv, in_order, rank_of, sim, real);
  }
  std::optional<SeriesComparison> compared;
  if (ticks) {
    compared =
        CompareSeries(*ticks, tick_s, FindSeriesOrigin(*ticks, tick_s, first_tokens), series);
    if (options.series_csv) WriteSeriesCsv(*options.series_csv, "--series-csv", *compared);
  }
  Report(options, sim, real, compared, count, setup.num_blocks, setup.cost->OutOfGridLookups(),
         preempted, CollectivePathOf(budget.hardware, dp * config.tensor_parallel_size));
  if (dp > 1 && !options.json) lock_steps.Print(dp);
}

}  // namespace

void AddValidateCommand(CLI::App& app) {
  CLI::App* validate = app.add_subcommand(
      "validate", "Replay a real serving run through the simulator and compare the latencies");
  validate->require_subcommand(1);
  auto options = std::make_shared<ValidateOptions>();
  CLI::App* bench = validate->add_subcommand(
      "vllm-bench",
      "A vLLM-bench run directory (meta.json, requests.jsonl, timeseries.csv): arrivals at "
      "queued_ts, its engine settings and KV capacity");
  bench->add_option("run-dir", options->run_dir, "The run directory")
      ->required()
      ->check(CLI::ExistingDirectory);
  bench->add_option("--bundle", options->bundle, "Performance bundle directory (meta.yaml, tp<N>/)")
      ->required()
      ->check(CLI::ExistingDirectory);
  bench->add_option("--model", options->model, "Model card name or config.json path")->required();
  bench->add_option(
      "--hardware", options->hardware,
      "GPU from the catalog, or a YAML path: sizes the KV cache when meta.json lacks "
      "num_gpu_blocks, and lays out the node a run of several GPUs prices its collectives on");
  bench
      ->add_option(engine_settings::kStepOverheadUs.spec.OptionName(), options->step_overhead_us,
                   std::string(engine_settings::kStepOverheadUs.spec.help))
      ->capture_default_str();
  bench->add_flag("--json", options->json, "Machine-readable output; errors as signed fractions");
  bench->add_option("--requests-csv", options->requests_csv,
                    "Write one row per request: simulated and measured TTFT, TPOT and E2E in "
                    "seconds, the DP rank that served it, and its preemptions in the replay");
  bench->add_option("--series-csv", options->series_csv,
                    "Write one row per tick of the run's timeseries.csv: running and waiting "
                    "requests, output and prompt tokens per second and KV cache usage, "
                    "simulated and measured");
  bench->callback([options]() {
    // Under mpirun, rank 0 replays and reports; every rank learns whether it failed, and
    // one line says why (the agreement of `run` and `sweep`).
    comm::MpiRuntime mpi(nullptr, nullptr);
    comm::ReportFailures([&] { comm::OnRankZero(MPI_COMM_WORLD, [&] { Validate(*options); }); });
  });
}

}  // namespace fleetsim
