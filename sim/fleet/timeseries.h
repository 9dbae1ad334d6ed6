// /timeseries: per instance group, at a fixed interval, the state at the interval's start
// (running and waiting requests, KV usage) and the throughput over it (prompt and
// generated tokens per second, by step end). Each rank sums its own instances; the
// ranks' sums are added at the end, so the table does not depend on the rank count.
//
//   Timeseries series(groups, interval);
//   series.SampleUpTo(now, [&](const Timeseries::Sampler& sample) {
//     for (each instance) sample(group, running, waiting, kv_used, kv_usable);
//   });
//   series.AddTokens(step_end / interval, group, prefill_tokens, generated_tokens);
//   std::vector<TimeseriesRow> rows = series.Reduce(group_names, comm);  // rank 0 has them
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "comm/communicator.h"
#include "core/checkpoint_io.h"
#include "core/sim_time.h"
#include "engine/token_tally.h"
#include "output/run_tables.h"

namespace fleetsim {

// The most intervals a run's /timeseries holds (it keeps them in memory until the end):
// 11.6 days at the default 1 s interval. A run that would reach further is refused (the
// fleet loop checks each window's end), naming timeseries.interval_s.
inline constexpr int64_t kMaxTimeseriesIntervals = 1'000'000;

class Timeseries {
 public:
  using Sampler = std::function<void(int32_t group, int64_t running, int64_t waiting,
                                     int64_t kv_used_blocks, int64_t kv_usable_blocks)>;

  Timeseries(std::size_t groups, SimTime interval);
  SimTime interval() const { return interval_; }

  // For every interval start in (the last one sampled, now] -- from the first call's
  // interval on -- calls `sample_all` with a sampler recording into that interval.
  void SampleUpTo(SimTime now, const std::function<void(const Sampler&)>& sample_all);
  // The next interval start SampleUpTo will record (kNever before its first call).
  SimTime next_sample_time() const { return next_sample_ < 0 ? kNever : next_sample_ * interval_; }
  void AddTokens(int64_t bucket, int32_t group, int64_t prompt_tokens, int64_t generated_tokens);
  // Takes back the state samples of interval starts after `t` (a window sampled ahead,
  // and nothing happened there after all); their token counts stay.
  void ForgetSamplesAfter(SimTime t);

  // This rank's sums so far (docs/CHECKPOINT.md); LoadAdd adds saved sums to these --
  // a run restarted on fewer ranks adds several ranks' -- and takes the sample position,
  // the same on every rank (`add` false: only that).
  void Save(CheckpointWriter& w) const;
  void LoadAdd(CheckpointReader& r, bool add = true);

  // Collective over `comm`: every rank's sums added; the rows (group by group, then per
  // series of `sums` -- each a name and the groups it adds up, e.g. a role's -- then the
  // fleet's, every group summed; each in time order) on rank 0, none elsewhere.
  struct GroupSum {
    std::string name;
    std::vector<std::size_t> groups;
  };
  std::vector<output::TimeseriesRow> Reduce(const std::vector<std::string>& group_names,
                                            const comm::Comm& comm,
                                            const std::vector<GroupSum>& sums = {}) const;

 private:
  enum Field { kRunning, kWaiting, kKvUsed, kKvUsable, kPrompt, kGenerated, kFields };
  using Cells = std::vector<int64_t>;  // [group * kFields + field]
  Cells& At(int64_t bucket);

  std::size_t groups_;
  SimTime interval_;
  int64_t next_sample_ = -1;  // the next interval to sample; -1 before the first call
  std::map<int64_t, Cells> buckets_;
};

}  // namespace fleetsim
