// A replay's per-tick series beside the run's own (`timeseries.csv`,
// workload/vllm_bench_series.h): running and waiting requests at each tick's end, and the
// output and prompt tokens per second over the tick, counted as vLLM counts them (an
// output token when its step ends, a prompt when its first token comes out), and the KV
// pool's usage at each tick's end.
//
//   SimulatedSeries sim;                  // filled from the engine's step records
//   SeriesComparison c = CompareSeries(ticks, tick_s, origin, sim);
//   WriteSeriesCsv("series.csv", c);      // one row per tick, both sides
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/sim_time.h"
#include "workload/vllm_bench_series.h"

namespace fleetsim {

struct SimulatedSeries {
  struct Queues {
    int64_t running, waiting;
    double kv_usage;  // the pool's usage, 0-1 (BlockPool::Usage; DP: the ranks' mean)
  };
  struct State {
    SimTime t;  // from when the run's stats read `queues`
    Queues queues;
  };
  // A step from `start` to `end`, its queues once scheduled and after it ran. vLLM's
  // stats come at a step's end (update_from_output). Under async scheduling the next step
  // was scheduled before that when it runs back to back (v1/engine/core.py
  // step_with_batch_queue), so they read its scheduled queues; else the step's own.
  void AddStep(SimTime start, SimTime end, const Queues& scheduled, const Queues& after);

  bool async_scheduling = false;
  struct Tokens {
    SimTime t;
    int64_t tokens;
  };
  std::vector<State> states;    // in time order
  std::vector<Tokens> outputs;  // each step's output tokens, at its end
  std::vector<Tokens> prompts;  // each request's prompt, at its first token
};

struct SeriesRow {
  double t_s = 0;  // the tick's end, on the run's clock
  int64_t running_sim = 0, running_measured = 0;
  int64_t waiting_sim = 0, waiting_measured = 0;
  double outputs_per_s_sim = 0, prompts_per_s_sim = 0;
  std::optional<double> outputs_per_s_measured, prompts_per_s_measured;
  double kv_cache_pct_sim = 0;
  std::optional<double> kv_cache_pct_measured;
};

// Mean absolute error over the ticks, and the measured mean it compares with.
struct SeriesError {
  double mae = 0, measured_mean = 0;
};

struct SeriesComparison {
  double tick_s = 1;
  SeriesOrigin origin;
  std::vector<SeriesRow> rows;
  SeriesError running, waiting;
  std::optional<SeriesError> outputs, prompts;  // where the run has the column
  // In percentage points of the pool. Absent where the run has no kv_cache_pct column, or
  // one that reads 0 at every tick although requests ran (`kv_cache_unrecorded`): the
  // LLMServingSim bench harness wrote 0 before it read SchedulerStats.kv_cache_usage.
  std::optional<SeriesError> kv_cache;
  bool kv_cache_unrecorded = false;
};

// Tick k of the run covers replay time (t_k - tick_s - lead, t_k - lead], lead from
// `origin`.
SeriesComparison CompareSeries(const std::vector<VllmBenchTick>& ticks, double tick_s,
                               const SeriesOrigin& origin, const SimulatedSeries& sim);

// One row per tick: t_s, then each figure simulated and measured (empty where the run
// lacks it). Throws OptionError naming `option` when the file cannot be written.
void WriteSeriesCsv(const std::string& path, const std::string& option,
                    const SeriesComparison& comparison);

}  // namespace fleetsim
