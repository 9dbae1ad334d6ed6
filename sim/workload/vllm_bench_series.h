// A vLLM-bench run's per-tick series (`timeseries.csv`: t, prompt_throughput,
// gen_throughput, running, waiting, kv_cache_pct) and the instant its ticks count from.
//
// The series is the engine's own counters read once a tick: `t` is the tick's end in
// seconds from the benchmark's start, the throughputs are tokens per second over the tick
// (vLLM counts a prompt's tokens once, when its first token comes out, and every output
// token as it is produced), running and waiting the queues at `t`, kv_cache_pct the KV
// pool's usage then (SchedulerStats.kv_cache_usage x 100: blocks held over usable blocks,
// cached-but-free ones counted free; with DP the ranks' mean). The benchmark starts a
// fraction of a second before the first request's queued_ts, which is time 0 of a replay.
//
//   std::vector<VllmBenchTick> ticks = ReadVllmBenchSeries("timeseries.csv");
//   SeriesOrigin origin = FindSeriesOrigin(ticks, 1.0, first_tokens);
//   // tick k covers replay time (t_k - tick - origin.lead_s, t_k - origin.lead_s]
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fleetsim {

struct VllmBenchTick {
  double t_s = 0;
  int64_t running = 0;
  int64_t waiting = 0;
  // Absent where the file has no such column.
  std::optional<double> prompt_tokens_per_s;
  std::optional<double> generated_tokens_per_s;
  std::optional<double> kv_cache_pct;  // 0-100
};

// A tick's index on the run's clock: its end over the tick length, rounded.
int64_t TickIndex(double t_s, double tick_s);

// Every tick of `path`; t, running and waiting are required. Problems are InputErrors
// naming the file, line and column.
std::vector<VllmBenchTick> ReadVllmBenchSeries(const std::string& path);

// A request's first token: seconds after the first request's queued_ts, and its prompt.
struct FirstToken {
  double seconds = 0;
  int64_t prompt_tokens = 0;
};

struct SeriesOrigin {
  double lead_s = 0;  // how long before the first request's queued_ts the ticks start
  // The prompt-token column against the requests' first tokens at that lead: tokens
  // counted in the wrong tick over all prompt tokens (0 when they agree exactly).
  double prompt_mismatch = 0;
  bool from_prompt_column = false;  // false: no prompt column or no requests; lead 0
};

// The lead that puts the run's own first tokens in the ticks its prompt-token column
// counts them in, searched over +-2 ticks in steps of a thousandth of a tick. Several
// leads often agree (the ticks are coarse): the middle of the agreeing range nearest 0.
SeriesOrigin FindSeriesOrigin(const std::vector<VllmBenchTick>& ticks, double tick_s,
                              const std::vector<FirstToken>& first_tokens);

}  // namespace fleetsim
