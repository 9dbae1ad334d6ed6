#include "engine/dp_engine.h"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "core/check.h"
#include "core/checkpoint_io.h"
#include "engine/dp_setup.h"

namespace fleetsim {

void DpRankChooser::Publish(SimTime t, std::vector<DpLoad> counts) {
  FLEETSIM_CHECK(counts.size() == counts_.size(), "one count per DP rank");
  counts_ = std::move(counts);
  published_ = true;
  last_publish_ = t;
}

int DpRankChooser::Choose() {
  // get_core_engine_for_request: score = waiting * 4 + running, `<` keeps the first lowest
  // from eng_start_index (0 with one API server); then current_counts[i][0] += client_count.
  int best = 0;
  int64_t best_score = INT64_MAX;
  for (std::size_t i = 0; i < counts_.size(); ++i) {
    const int64_t score = counts_[i].waiting * 4 + counts_[i].running;
    if (score < best_score) {
      best_score = score;
      best = static_cast<int>(i);
    }
  }
  ++counts_[static_cast<std::size_t>(best)].waiting;
  return best;
}

void DpRankChooser::Save(CheckpointWriter& w) const {
  w.Pods(counts_);
  w.Bool(published_);
  w.I64(last_publish_);
}

void DpRankChooser::Load(CheckpointReader& r) {
  std::vector<DpLoad> counts = r.Pods<DpLoad>();
  r.Require(counts.size() == counts_.size(), "the DP ranks' published counts");
  counts_ = std::move(counts);
  published_ = r.Bool();
  last_publish_ = r.I64();
}

DpEngine::DpEngine(std::vector<std::unique_ptr<Instance>> ranks, const StepCostModel& cost,
                   CollectiveModel dp_group, int64_t hidden, int64_t capture_tokens,
                   ExpertMaskCost mask)
    : ranks_(std::move(ranks)),
      cost_(cost),
      dp_group_(std::move(dp_group)),
      hidden_(hidden),
      capture_tokens_(capture_tokens),
      mask_(mask),
      chooser_(static_cast<int>(ranks_.size())) {
  FLEETSIM_CHECK(ranks_.size() >= 2, "a data-parallel engine has two ranks or more");
  loads_before_step_ = Loads();
}

std::vector<DpLoad> DpEngine::Loads() const {
  std::vector<DpLoad> loads;
  loads.reserve(ranks_.size());
  for (const auto& r : ranks_)
    loads.push_back({r->outstanding() - r->num_running(), r->num_running()});
  return loads;
}

void DpEngine::Arrive(std::unique_ptr<Request> request, SimTime arrival) {
  FLEETSIM_CHECK(arrival >= last_assigned_,
                 "a request arrives at a data-parallel engine before one it already placed");
  auto at = arrivals_.end();
  while (at != arrivals_.begin()) {
    const auto& before = *std::prev(at);
    if (std::tie(before.first, before.second->id) <= std::tie(arrival, request->id)) break;
    --at;
  }
  arrivals_.emplace(at, arrival, std::move(request));
}

void DpEngine::GiveToRank(SimTime arrival, std::unique_ptr<Request> request) {
  last_assigned_ = arrival;
  ranks_[static_cast<std::size_t>(chooser_.Choose())]->Arrive(std::move(request), arrival);
}

void DpEngine::AssignArrivals() {
  if (arrivals_.empty() || arrivals_.front().first > now_) return;
  last_active_ = now_;
  while (!arrivals_.empty() && arrivals_.front().first <= now_) {
    auto [arrival, request] = std::move(arrivals_.front());
    arrivals_.pop_front();
    if (chooser_.Due(arrival)) {
      // What the engines had published by `arrival`: a lock-step still running then (it
      // started before `arrival` and ends at now_) has not.
      chooser_.Publish(arrival, arrival < now_ ? loads_before_step_ : Loads());
    }
    GiveToRank(arrival, std::move(request));
  }
}

void DpEngine::RecordScheduledState(bool on) {
  record_scheduled_ = on;
  for (auto& rank : ranks_)
    rank->RecordScheduledState(on);
}

void DpEngine::OnRankStep(RankStepObserver observer) {
  on_rank_step_ = std::move(observer);
  for (std::size_t r = 0; r < ranks_.size(); ++r) {
    ranks_[r]->OnStep(
        [this, rank = static_cast<int>(r)](const StepRecord& s) { on_rank_step_(rank, s); });
  }
}

SimTime DpEngine::NextEventTime() const {
  // Between two wave-end checks every rank runs dummy steps.
  if (wave_steps_ % kWaveCheckSteps != 0) return now_;
  SimTime next = arrivals_.empty() ? kNever : std::max(now_, arrivals_.front().first);
  for (const auto& r : ranks_)
    next = std::min(next, r->NextEventTime());
  return next;
}

int64_t DpEngine::outstanding() const {
  int64_t n = static_cast<int64_t>(arrivals_.size());
  for (const auto& r : ranks_)
    n += r->outstanding();
  return n;
}

int64_t DpEngine::num_running() const {
  int64_t n = 0;
  for (const auto& r : ranks_)
    n += r->num_running();
  return n;
}

int64_t DpEngine::num_waiting() const {
  int64_t n = 0;
  for (const auto& r : ranks_)
    n += r->num_waiting();
  return n;
}

int64_t DpEngine::kv_used_blocks() const {
  int64_t n = 0;
  for (const auto& r : ranks_)
    n += r->kv_cache().num_usable_blocks() - r->kv_cache().num_free_blocks();
  return n;
}

int64_t DpEngine::kv_usable_blocks() const {
  int64_t n = 0;
  for (const auto& r : ranks_)
    n += r->kv_cache().num_usable_blocks();
  return n;
}

void DpEngine::FlushPending() {
  while (!arrivals_.empty()) {
    auto [arrival, request] = std::move(arrivals_.front());
    arrivals_.pop_front();
    GiveToRank(arrival, std::move(request));
  }
  for (auto& r : ranks_)
    r->FlushPending();
}

DpStepTiming DpEngine::Time(const std::vector<std::optional<BatchShape>>& shapes) const {
  // What each rank runs (gpu_model_runner.py _determine_batch_execution_and_padding and
  // dp_utils.py coordinate_batch_across_dp): its tokens, an idle rank's dummy batch 1
  // (execute_dummy_batch -> _dummy_run(1): a forward with no attention metadata and no
  // sampling, priced as a batch of no sequences), padded to its CUDA-graph capture size.
  // When every rank's batch fits a graph, all run the largest of those; when one does not
  // (eager), each runs its own.
  const auto ranks = static_cast<int64_t>(shapes.size());
  const auto tokens_of = [&](std::size_t r) { return shapes[r] ? shapes[r]->total_tokens() : 1; };
  int64_t most = 0;
  bool all_graphs = capture_tokens_ > 0;
  for (std::size_t r = 0; r < shapes.size(); ++r) {
    const int64_t padded = CudagraphPaddedTokens(tokens_of(r), capture_tokens_);
    all_graphs = all_graphs && padded > 0;
    most = std::max(most, padded);
  }
  const auto run_of = [&](std::size_t r) {
    const int64_t padded = CudagraphPaddedTokens(tokens_of(r), capture_tokens_);
    return all_graphs ? most : padded > 0 ? padded : tokens_of(r);
  };
  DpStepTiming t;
  const int64_t first_run = shapes.empty() ? 0 : run_of(0);
  bool equal_runs = true;
  for (std::size_t r = 0; r < shapes.size(); ++r) {
    const int64_t run = run_of(r);
    t.slowest_rank_ns =
        std::max(t.slowest_rank_ns,
                 cost_.CostOutsideMoe(shapes[r] ? *shapes[r] : BatchShape(), run).total_ns);
    t.gathered_tokens += run;
    equal_runs = equal_runs && run == first_run;
  }
  const auto gathered = static_cast<double>(t.gathered_tokens);
  t.masked_ns = std::llround(cost_.moe_layers() * mask_.LayerUs(gathered) * 1000.0);
  t.moe_ns = std::llround(cost_.ExpertShardMoeUs(gathered, static_cast<int>(ranks)) * 1000.0) +
             t.masked_ns;
  // Unequal runs (a rank eager) exchange by rooted groups, priced on each rank's count;
  // equal ones, the lock-steps under CUDA graphs, need no list of counts.
  double exchange_us = 0;
  if (equal_runs) {
    exchange_us =
        dp_group_.ExpertDispatchCombineUs(t.gathered_tokens, hidden_, cost_.moe_experts());
  } else {
    std::vector<int64_t> runs(shapes.size());
    for (std::size_t r = 0; r < shapes.size(); ++r)
      runs[r] = run_of(r);
    exchange_us = dp_group_.ExpertDispatchCombineUs(runs, hidden_, cost_.moe_experts());
    t.rooted_exchange = true;
  }
  t.exchange_ns = std::llround(cost_.moe_layers() * exchange_us * 1000.0);
  t.total_ns = t.slowest_rank_ns + t.moe_ns + t.exchange_ns;
  return t;
}

void DpEngine::RunUntil(SimTime until) {
  std::vector<std::optional<BatchShape>> shapes(ranks_.size());
  while (now_ < until) {
    AssignArrivals();
    bool any = false;
    for (std::size_t r = 0; r < ranks_.size(); ++r) {
      shapes[r] = ranks_[r]->BeginLockStep(now_);
      any = any || shapes[r].has_value();
    }
    if (!any && wave_steps_ % kWaveCheckSteps != 0) {
      // Work ran out between two wave-end checks: every rank runs dummy steps up to the
      // next check (a request arriving meanwhile joins the next lock-step).
    } else if (!any) {
      // The wave is over (or every rank waits on an arrival): wait for the next request.
      wave_steps_ = 0;
      SimTime next = arrivals_.empty() ? kNever : arrivals_.front().first;
      for (const auto& r : ranks_)
        next = std::min(next, r->NextArrival());
      if (next == kNever || next >= until) return;
      now_ = next;
      continue;
    }
    const DpStepTiming timing = Time(shapes);
    loads_before_step_ = Loads();
    const SimTime end = now_ + timing.total_ns;
    DpStepRecord record;
    record.start = now_;
    record.timing = timing;
    if (record_scheduled_) {
      for (const auto& rank : ranks_) {
        record.scheduled_running += rank->num_running();
        record.scheduled_waiting += rank->num_waiting();
        record.scheduled_kv_usage += rank->kv_cache().Usage() / static_cast<double>(ranks_.size());
      }
    }
    last_active_ = now_;
    for (std::size_t r = 0; r < ranks_.size(); ++r) {
      Instance& rank = *ranks_[r];
      if (shapes[r]) {
        rank.FinishLockStep(*shapes[r], timing.total_ns);
        ++record.busy_ranks;
      } else {
        rank.IdleUntil(end);
        if (on_rank_step_) {
          StepRecord dummy;
          dummy.start = now_;
          dummy.duration = timing.total_ns;
          dummy.running = rank.num_running();
          dummy.waiting = rank.num_waiting();
          dummy.kv_usage = rank.kv_cache().Usage();
          if (record_scheduled_) {
            dummy.scheduled_running = dummy.running;
            dummy.scheduled_waiting = dummy.waiting;
            dummy.scheduled_kv_usage = dummy.kv_usage;
          }
          on_rank_step_(static_cast<int>(r), dummy);
        }
      }
      record.running += rank.num_running();
      record.waiting += rank.num_waiting();
      if (on_step_) record.kv_usage += rank.kv_cache().Usage() / static_cast<double>(ranks_.size());
    }
    busy_ += timing.total_ns;
    now_ = end;
    ++steps_;
    ++wave_steps_;
    if (on_step_) on_step_(record);
  }
}

std::vector<RequestRecord> DpEngine::TakeRecords(std::vector<int32_t>* ranks) {
  std::vector<RequestRecord> out;
  if (ranks) ranks->clear();
  for (std::size_t r = 0; r < ranks_.size(); ++r) {
    std::vector<RequestRecord> records = ranks_[r]->TakeRecords();
    if (ranks) ranks->insert(ranks->end(), records.size(), static_cast<int32_t>(r));
    out.insert(out.end(), std::make_move_iterator(records.begin()),
               std::make_move_iterator(records.end()));
  }
  return out;
}

// A field added to DpEngine or DpRankChooser is state the checkpoint must hold (or
// configuration rebuilt from the cluster config): save it below (and bump
// kCheckpointFormat, fleet/checkpoint_files.h), then update the size. The round trip in
// tests/engine/dp_engine_test.cc catches a field that padding hides.
static_assert(sizeof(DpRankChooser) == 40,
              "DpRankChooser changed: save the new field in DpRankChooser::Save/Load");
static_assert(sizeof(DpEngine) == 552,
              "DpEngine changed: save the new field in DpEngine::Save/Load");

void DpEngine::Save(CheckpointWriter& w) const {
  // cost_, dp_group_, hidden_, capture_tokens_ and mask_ are configuration, rebuilt
  // from the cluster config; on_step_, on_rank_step_ and record_scheduled_ are the caller's.
  w.U64(ranks_.size());
  for (const auto& rank : ranks_)
    rank->Save(w);
  chooser_.Save(w);
  w.U64(arrivals_.size());
  for (const auto& [arrival, request] : arrivals_) {
    w.I64(arrival);
    request->Save(w);
  }
  w.I64(last_assigned_);
  w.I64(now_);
  w.I64(last_active_);
  w.I64(busy_);
  w.I64(steps_);
  w.I64(wave_steps_);
  w.Pods(loads_before_step_);
}

void DpEngine::Load(CheckpointReader& r) {
  FLEETSIM_CHECK(arrivals_.empty() && steps_ == 0, "a checkpoint is loaded into a fresh engine");
  r.Require(r.U64() == ranks_.size(), "the number of DP ranks");
  for (auto& rank : ranks_)
    rank->Load(r);
  chooser_.Load(r);
  const std::size_t groups = ranks_.front()->kv_cache().layout().groups.size();
  const uint64_t arrivals = r.Count(8);
  for (uint64_t i = 0; i < arrivals; ++i) {
    const SimTime arrival = r.I64();
    auto request = std::make_unique<Request>();
    request->Load(r, groups);
    r.Require(arrivals_.empty() || std::tie(arrivals_.back().first, arrivals_.back().second->id) <
                                       std::tie(arrival, request->id),
              "a request not yet given a DP rank, out of order");
    arrivals_.emplace_back(arrival, std::move(request));
  }
  last_assigned_ = r.I64();
  now_ = r.I64();
  last_active_ = r.I64();
  busy_ = r.I64();
  steps_ = r.I64();
  wave_steps_ = r.I64();
  r.Require(steps_ >= 0 && wave_steps_ >= 0 && wave_steps_ <= steps_, "the lock-step counts");
  std::vector<DpLoad> loads = r.Pods<DpLoad>();
  r.Require(loads.size() == ranks_.size(), "the DP ranks' loads before the last lock-step");
  loads_before_step_ = std::move(loads);
}

}  // namespace fleetsim
