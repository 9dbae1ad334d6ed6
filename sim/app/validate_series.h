// A replay's per-tick series beside the run's own (`timeseries.csv`,
// workload/vllm_bench_series.h): running and waiting requests at each tick's end, and the
// output and prompt tokens per second over the tick, counted as vLLM counts them (an
// output token when its step ends, a prompt when its first token comes out).
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
  struct State {
    SimTime t;  // a step's end
    int64_t running, waiting;
  };
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
