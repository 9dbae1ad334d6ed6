#include "fleet/timeseries.h"

#include <iterator>
#include <limits>

#include "comm/collectives.h"

namespace fleetsim {

Timeseries::Timeseries(std::size_t groups, SimTime interval)
    : groups_(groups), interval_(interval) {}

Timeseries::Cells& Timeseries::At(int64_t bucket) {
  Cells& cells = buckets_[bucket];
  if (cells.empty()) cells.assign(groups_ * kFields, 0);
  return cells;
}

void Timeseries::SampleUpTo(SimTime now, const std::function<void(const Sampler&)>& sample_all) {
  if (next_sample_ < 0) next_sample_ = now / interval_;
  for (; next_sample_ * interval_ <= now; ++next_sample_) {
    Cells& cells = At(next_sample_);
    sample_all([&](int32_t group, int64_t running, int64_t waiting, int64_t used, int64_t usable) {
      int64_t* g = &cells[static_cast<std::size_t>(group) * kFields];
      g[kRunning] += running;
      g[kWaiting] += waiting;
      g[kKvUsed] += used;
      g[kKvUsable] += usable;
    });
  }
}

void Timeseries::AddTokens(int64_t bucket, int32_t group, int64_t prompt_tokens,
                           int64_t generated_tokens) {
  int64_t* g = &At(bucket)[static_cast<std::size_t>(group) * kFields];
  g[kPrompt] += prompt_tokens;
  g[kGenerated] += generated_tokens;
}

void Timeseries::ForgetSamplesAfter(SimTime t) {
  for (auto it = buckets_.upper_bound(t / interval_); it != buckets_.end();) {
    Cells& cells = it->second;
    bool tokens = false;
    for (std::size_t g = 0; g < groups_; ++g) {
      int64_t* c = &cells[g * kFields];
      c[kRunning] = c[kWaiting] = c[kKvUsed] = c[kKvUsable] = 0;
      tokens = tokens || c[kPrompt] != 0 || c[kGenerated] != 0;
    }
    it = tokens ? std::next(it) : buckets_.erase(it);
  }
}

std::vector<output::TimeseriesRow> Timeseries::Reduce(const std::vector<std::string>& group_names,
                                                      const comm::Comm& comm,
                                                      const std::vector<GroupSum>& sums) const {
  const int64_t first = comm::AllReduceMin(
      buckets_.empty() ? std::numeric_limits<int64_t>::max() : buckets_.begin()->first, comm);
  const int64_t last = comm::AllReduceMax(
      buckets_.empty() ? std::numeric_limits<int64_t>::min() : buckets_.rbegin()->first, comm);
  if (first > last) return {};
  const auto width = static_cast<std::size_t>(last - first + 1);
  const std::size_t stride = groups_ * kFields;
  std::vector<int64_t> dense(width * stride, 0);
  for (const auto& [bucket, cells] : buckets_) {
    std::copy(cells.begin(), cells.end(),
              dense.begin() +
                  static_cast<std::ptrdiff_t>(static_cast<std::size_t>(bucket - first) * stride));
  }
  comm::AllReduceSum(dense, comm);
  std::vector<output::TimeseriesRow> rows;
  if (comm::RankOf(comm) != 0) return rows;
  const double seconds = ToSeconds(interval_);
  // The sums' rows, then the fleet's, follow the groups': each interval's cells summed
  // over their groups.
  std::vector<GroupSum> series;
  for (std::size_t g = 0; g < groups_; ++g)
    series.push_back({group_names[g], {g}});
  series.insert(series.end(), sums.begin(), sums.end());
  GroupSum fleet_sum{"fleet", {}};
  for (std::size_t g = 0; g < groups_; ++g)
    fleet_sum.groups.push_back(g);
  series.push_back(std::move(fleet_sum));
  std::vector<int64_t> summed(width * kFields, 0);
  for (const GroupSum& sum : series) {
    std::fill(summed.begin(), summed.end(), 0);
    for (std::size_t b = 0; b < width; ++b) {
      for (const std::size_t g : sum.groups) {
        for (std::size_t f = 0; f < std::size_t{kFields}; ++f)
          summed[b * kFields + f] += dense[b * stride + g * kFields + f];
      }
    }
    for (std::size_t b = 0; b < width; ++b) {
      const int64_t* c = &summed[b * kFields];
      output::TimeseriesRow row{};
      output::CopyName(row.group, sum.name);
      row.time_s = ToSeconds((first + static_cast<int64_t>(b)) * interval_);
      row.running = c[kRunning];
      row.waiting = c[kWaiting];
      row.kv_usage = c[kKvUsable] > 0
                         ? static_cast<double>(c[kKvUsed]) / static_cast<double>(c[kKvUsable])
                         : 0.0;
      row.prompt_tokens_per_s = static_cast<double>(c[kPrompt]) / seconds;
      row.generation_tokens_per_s = static_cast<double>(c[kGenerated]) / seconds;
      rows.push_back(row);
    }
  }
  return rows;
}

void Timeseries::Save(CheckpointWriter& w) const {
  w.I64(next_sample_);
  w.U64(buckets_.size());
  for (const auto& [bucket, cells] : buckets_) {
    w.I64(bucket);
    w.Pods(cells);
  }
}

void Timeseries::LoadAdd(CheckpointReader& r, bool add) {
  next_sample_ = r.I64();
  const uint64_t n = r.Count(16);
  for (uint64_t i = 0; i < n; ++i) {
    const int64_t bucket = r.I64();
    const Cells cells = r.Pods<int64_t>();
    r.Require(bucket >= 0 && cells.size() == groups_ * kFields, "time series interval");
    if (!add) continue;
    Cells& sums = At(bucket);
    for (std::size_t k = 0; k < cells.size(); ++k)
      sums[k] += cells[k];
  }
}

}  // namespace fleetsim
