#include "app/validate_series.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <unordered_map>

#include "core/input_error.h"

namespace fleetsim {
namespace {

// Tokens per tick, keyed by the tick's index on the run's clock (its end / tick_s).
std::unordered_map<int64_t, double> PerTick(const std::vector<SimulatedSeries::Tokens>& events,
                                            double tick_s, double lead_s) {
  std::unordered_map<int64_t, double> per_tick;
  for (const SimulatedSeries::Tokens& e : events) {
    const auto k = static_cast<int64_t>(std::ceil((ToSeconds(e.t) + lead_s) / tick_s));
    per_tick[k] += static_cast<double>(e.tokens);
  }
  return per_tick;
}

double At(const std::unordered_map<int64_t, double>& per_tick, int64_t k) {
  const auto it = per_tick.find(k);
  return it == per_tick.end() ? 0.0 : it->second;
}

class ErrorSum {
 public:
  void Add(double simulated, double measured) {
    abs_ += std::abs(simulated - measured);
    measured_ += measured;
    ++n_;
  }
  SeriesError Mean() const {
    if (n_ == 0) return {};
    return {abs_ / static_cast<double>(n_), measured_ / static_cast<double>(n_)};
  }
  bool empty() const { return n_ == 0; }

 private:
  double abs_ = 0, measured_ = 0;
  int64_t n_ = 0;
};

}  // namespace

void SimulatedSeries::AddStep(SimTime start, SimTime end, const Queues& scheduled,
                              const Queues& after) {
  // The last state is the previous step's end.
  if (async_scheduling && !states.empty() && states.back().t == start)
    states.push_back({start, scheduled});
  states.push_back({end, after});
}

SeriesComparison CompareSeries(const std::vector<VllmBenchTick>& ticks, double tick_s,
                               const SeriesOrigin& origin, const SimulatedSeries& sim) {
  SeriesComparison out;
  out.tick_s = tick_s;
  out.origin = origin;
  const auto outputs = PerTick(sim.outputs, tick_s, origin.lead_s);
  const auto prompts = PerTick(sim.prompts, tick_s, origin.lead_s);
  ErrorSum running, waiting, output_error, prompt_error, kv_error;
  bool kv_all_zero = true, ran = false;
  for (const VllmBenchTick& tick : ticks) {
    SeriesRow row;
    row.t_s = tick.t_s;
    // The queues as the last step ending by then left them.
    const double replay_s = tick.t_s - origin.lead_s;
    const auto after = std::upper_bound(
        sim.states.begin(), sim.states.end(), replay_s,
        [](double s, const SimulatedSeries::State& state) { return s < ToSeconds(state.t); });
    if (after != sim.states.begin()) {
      const SimulatedSeries::Queues& queues = std::prev(after)->queues;
      row.running_sim = queues.running;
      row.waiting_sim = queues.waiting;
      row.kv_cache_pct_sim = 100 * queues.kv_usage;
    }
    row.running_measured = tick.running;
    row.waiting_measured = tick.waiting;
    running.Add(static_cast<double>(row.running_sim), static_cast<double>(tick.running));
    waiting.Add(static_cast<double>(row.waiting_sim), static_cast<double>(tick.waiting));
    const int64_t k = TickIndex(tick.t_s, tick_s);
    row.outputs_per_s_sim = At(outputs, k) / tick_s;
    row.prompts_per_s_sim = At(prompts, k) / tick_s;
    row.outputs_per_s_measured = tick.generated_tokens_per_s;
    row.prompts_per_s_measured = tick.prompt_tokens_per_s;
    if (row.outputs_per_s_measured)
      output_error.Add(row.outputs_per_s_sim, *row.outputs_per_s_measured);
    if (row.prompts_per_s_measured)
      prompt_error.Add(row.prompts_per_s_sim, *row.prompts_per_s_measured);
    row.kv_cache_pct_measured = tick.kv_cache_pct;
    if (tick.kv_cache_pct) {
      kv_error.Add(row.kv_cache_pct_sim, *tick.kv_cache_pct);
      kv_all_zero = kv_all_zero && *tick.kv_cache_pct == 0;
    }
    ran = ran || tick.running > 0;
    out.rows.push_back(row);
  }
  out.running = running.Mean();
  out.waiting = waiting.Mean();
  if (!output_error.empty()) out.outputs = output_error.Mean();
  if (!prompt_error.empty()) out.prompts = prompt_error.Mean();
  out.kv_cache_unrecorded = !kv_error.empty() && kv_all_zero && ran;
  if (!kv_error.empty() && !out.kv_cache_unrecorded) out.kv_cache = kv_error.Mean();
  if (out.kv_cache_unrecorded) {
    for (SeriesRow& row : out.rows)
      row.kv_cache_pct_measured.reset();
  }
  return out;
}

void WriteSeriesCsv(const std::string& path, const std::string& option,
                    const SeriesComparison& comparison) {
  std::FILE* file = std::fopen(path.c_str(), "w");
  if (!file) throw OptionError(option, path + ": cannot be written");
  std::fprintf(file,
               "t_s,running_sim,running_measured,waiting_sim,waiting_measured,"
               "output_tokens_per_s_sim,output_tokens_per_s_measured,prompt_tokens_per_s_sim,"
               "prompt_tokens_per_s_measured,kv_cache_pct_sim,kv_cache_pct_measured\n");
  const auto measured = [](const std::optional<double>& v) {
    char text[32] = "";
    if (v) std::snprintf(text, sizeof text, "%.10g", *v);
    return std::string(text);
  };
  for (const SeriesRow& r : comparison.rows) {
    std::fprintf(file, "%.10g,%lld,%lld,%lld,%lld,%.10g,%s,%.10g,%s,%.10g,%s\n", r.t_s,
                 static_cast<long long>(r.running_sim), static_cast<long long>(r.running_measured),
                 static_cast<long long>(r.waiting_sim), static_cast<long long>(r.waiting_measured),
                 r.outputs_per_s_sim, measured(r.outputs_per_s_measured).c_str(),
                 r.prompts_per_s_sim, measured(r.prompts_per_s_measured).c_str(),
                 r.kv_cache_pct_sim, measured(r.kv_cache_pct_measured).c_str());
  }
  if (std::fclose(file) != 0) throw OptionError(option, path + ": write failed");
}

}  // namespace fleetsim
