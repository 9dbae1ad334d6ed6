#include "engine/instance.h"

#include <algorithm>

#include "core/check.h"

namespace fleetsim {

Instance::Instance(const SchedulerConfig& config, const KvCacheLayout& layout, int64_t num_blocks,
                   bool prefix_caching, const StepCostModel& cost)
    : kv_(layout, num_blocks, prefix_caching),
      scheduler_(config, kv_),
      cost_(cost),
      config_(config) {}

void Instance::Arrive(std::unique_ptr<Request> request, SimTime arrival) {
  FLEETSIM_CHECK(pending_.empty() || pending_.back().first <= arrival,
                 "requests arrive at an instance in time order");
  pending_.emplace_back(arrival, std::move(request));
  stalled_ = false;
}

SimTime Instance::NextEventTime() const {
  if (stalled_) return kNever;
  if (!scheduler_.idle()) return now_;
  if (!pending_.empty()) return std::max(now_, pending_.front().first);
  return kNever;
}

void Instance::Settle(Request& request) {
  settled_.push_back(std::move(RecordOf(request)));
  free_slots_.push_back(request.slot);
  request.slot = -1;
}

std::vector<RequestRecord> Instance::TakeRecords() {
  std::vector<RequestRecord> out;
  out.swap(settled_);
  return out;
}

void Instance::FlushPending() {
  AdmitArrivalsUpTo(kNever);
  // The requests stay allocated: the scheduler still points at them.
  for (const std::unique_ptr<Request>& r : live_) {
    if (r->slot >= 0) Settle(*r);
  }
}

void Instance::AdmitArrivalsUpTo(SimTime t) {
  while (!pending_.empty() && pending_.front().first <= t) {
    auto [arrival, request] = std::move(pending_.front());
    pending_.pop_front();
    RequestRecord record;
    record.id = request->id;
    record.name = request->name;
    record.arrival = arrival;
    record.input_tokens = request->prompt_tokens;
    if (free_slots_.empty()) {
      request->slot = static_cast<int64_t>(slots_.size());
      slots_.emplace_back();
    } else {
      request->slot = free_slots_.back();
      free_slots_.pop_back();
    }
    RecordOf(*request) = std::move(record);
    const RejectReason reason = scheduler_.Add(request.get());
    if (reason != RejectReason::kNone) {
      RequestRecord& rejected = RecordOf(*request);
      rejected.state = RequestState::kRejected;
      rejected.reject_reason = reason;
      rejected.finish = arrival;
      Settle(*request);
      continue;
    }
    live_.push_back(std::move(request));
  }
}

BatchShape Instance::ShapeOf(const StepPlan& plan) const {
  BatchShape shape;
  for (const ScheduledChunk& chunk : plan.chunks) {
    const Request& r = *chunk.request;
    if (chunk.computed_before >= r.num_tokens() - 1 && chunk.num_tokens == 1 &&
        chunk.computed_before >= r.prompt_tokens) {
      shape.AddDecode(chunk.computed_before);
    } else {
      const bool samples = chunk.computed_before + chunk.num_tokens >= r.num_tokens();
      shape.AddPrefill(chunk.num_tokens, chunk.computed_before, samples);
    }
  }
  return shape;
}

void Instance::RunStep() {
  const StepPlan& plan = scheduler_.Schedule();
  if (plan.empty()) return;
  const BatchShape shape = ShapeOf(plan);
  const StepCost cost = cost_.Cost(shape);
  const SimTime start = now_;
  last_active_ = start;
  const SimTime end = start + cost.total_ns;
  for (const ScheduledChunk& chunk : plan.chunks) {
    RequestRecord& record = RecordOf(*chunk.request);
    record.first_scheduled = std::min(record.first_scheduled, start);
  }
  for (Request* victim : plan.preempted) {
    RecordOf(*victim).preemptions = victim->num_preemptions;
  }
  int64_t generated = 0;
  for (const ScheduledChunk& chunk : plan.chunks)
    generated -= chunk.request->num_output;
  const std::vector<Request*>& finished = scheduler_.Complete(plan);
  for (const ScheduledChunk& chunk : plan.chunks) {
    const Request& r = *chunk.request;
    generated += r.num_output;
    RequestRecord& record = RecordOf(r);
    if (r.num_output >= 1 && record.first_token == kNever) record.first_token = end;
    record.output_tokens = r.num_output;
    record.cached_tokens = r.cached_tokens;
  }
  for (Request* r : finished) {
    RequestRecord& record = RecordOf(*r);
    record.finish = end;
    record.state = RequestState::kFinished;
    Settle(*r);
  }
  if (!finished.empty()) {
    std::erase_if(live_, [](const std::unique_ptr<Request>& r) {
      return r->state == RequestState::kFinished;
    });
  }
  ++steps_;
  busy_ += cost.total_ns;
  now_ = end;
  if (on_step_) {
    StepRecord step;
    step.start = start;
    step.duration = cost.total_ns;
    step.prefill_tokens = shape.prefill_tokens();
    step.prefill_chunks = shape.num_prefills();
    step.decodes = shape.num_decodes();
    step.generated_tokens = generated;
    step.preemptions = static_cast<int64_t>(plan.preempted.size());
    for (const ScheduledChunk& chunk : plan.chunks)
      step.cache_hit_tokens += chunk.cached_tokens;
    step.running = static_cast<int64_t>(scheduler_.running().size());
    step.waiting = static_cast<int64_t>(scheduler_.waiting().size());
    step.kv_usage = kv_.Usage();
    on_step_(step);
  }
}

StepCostModel::DecodeRun& Instance::DecodeCosts(int64_t decodes) {
  for (auto& run : decode_costs_) {
    if (run && run->decodes() == decodes) return *run;
  }
  auto& slot = decode_costs_[next_decode_cost_];
  next_decode_cost_ = (next_decode_cost_ + 1) % decode_costs_.size();
  return slot.emplace(cost_, decodes);
}

bool Instance::FastDecode(SimTime until) {
  if (!fast_decode_ || !scheduler_.waiting().empty()) return false;
  const std::vector<Request*>& running = scheduler_.running();
  const auto n = static_cast<int64_t>(running.size());
  if (n == 0 || n > config_.max_num_batched_tokens) return false;
  const SimTime next_arrival = pending_.empty() ? kNever : pending_.front().first;
  if (now_ >= until || now_ >= next_arrival) return false;
  // Steps every request can take without finishing or reaching max_model_len.
  int64_t stretch = INT64_MAX;
  int64_t context_sum = 0;
  for (const Request* r : running) {
    const int64_t c = r->num_computed;
    if (c != r->num_tokens() - 1 || c < r->prompt_tokens) return false;  // not decoding
    stretch = std::min({stretch, r->max_output_tokens - r->num_output - 1,
                        config_.max_model_len - r->num_tokens() - 1});
    context_sum += c;
  }
  if (stretch < 1) return false;

  // Per request: the next step (counted from the stretch's first) whose allocation or
  // commit has pool work, and the step its counts were last brought to.
  lanes_.resize(static_cast<std::size_t>(n));
  int64_t next_work = INT64_MAX;
  for (std::size_t i = 0; i < lanes_.size(); ++i) {
    lanes_[i] = {kv_.DecodeStepsWithoutPoolWork(*running[i]), 0};
    next_work = std::min(next_work, lanes_[i].next_work);
  }
  const auto bring_to = [&](std::size_t i, int64_t step) {
    Request& r = *running[i];
    r.num_computed += step - lanes_[i].synced;
    r.num_output += step - lanes_[i].synced;
    lanes_[i].synced = step;
  };

  StepCostModel::DecodeRun& cost = DecodeCosts(n);
  int64_t steps = 0;
  SimTime t = now_;
  double usage = kv_.Usage();
  const PrefixHit no_hit;
  while (steps < stretch && t < until && t < next_arrival) {
    if (steps == next_work) {
      // As the scheduler's step would, in running order -- unless the pool might run
      // short, which needs the ordinary step (it preempts).
      int64_t needed = 0;
      for (std::size_t i = 0; i < lanes_.size(); ++i) {
        if (lanes_[i].next_work != steps) continue;
        bring_to(i, steps);
        needed += kv_.DecodeBlocksNeeded(*running[i]);
      }
      if (needed > kv_.num_free_blocks()) break;
      for (std::size_t i = 0; i < lanes_.size(); ++i) {
        if (lanes_[i].next_work != steps) continue;
        const bool allocated = kv_.Allocate(*running[i], 1, no_hit, false);
        FLEETSIM_CHECK(allocated, "a decode step's blocks were counted free");
      }
      usage = kv_.Usage();
      ++fast_decode_pool_steps_;
    }
    const SimTime duration = cost.TotalNs(context_sum + steps * n);
    if (on_step_) {
      StepRecord step;
      step.start = t;
      step.duration = duration;
      step.decodes = n;
      step.generated_tokens = n;
      step.running = n;
      step.kv_usage = usage;
      on_step_(step);
    }
    last_active_ = t;
    t += duration;
    if (steps == next_work) {
      // The step's commits, in running order, and each request's next step with work.
      next_work = INT64_MAX;
      for (std::size_t i = 0; i < lanes_.size(); ++i) {
        if (lanes_[i].next_work == steps) {
          bring_to(i, steps + 1);
          kv_.CommitStep(*running[i]);
          lanes_[i].next_work = steps + 1 + kv_.DecodeStepsWithoutPoolWork(*running[i]);
        }
        next_work = std::min(next_work, lanes_[i].next_work);
      }
    }
    ++steps;
  }
  for (std::size_t i = 0; i < lanes_.size(); ++i) {
    bring_to(i, steps);
    kv_.CatchUpHashedBlocks(*running[i]);
    RecordOf(*running[i]).output_tokens = running[i]->num_output;
  }
  if (steps == 0) return false;
  steps_ += steps;
  fast_decode_steps_ += steps;
  busy_ += t - now_;
  now_ = t;
  return true;
}

void Instance::RunUntil(SimTime until) {
  while (now_ < until) {
    if (!pending_.empty() && pending_.front().first <= now_) last_active_ = now_;
    AdmitArrivalsUpTo(now_);
    if (FastDecode(until)) continue;
    if (scheduler_.idle()) {
      if (pending_.empty()) return;
      // Nothing to run: jump to the next arrival.
      now_ = std::max(now_, pending_.front().first);
      if (now_ >= until) return;
      continue;
    }
    const int64_t before = steps_;
    RunStep();
    if (steps_ == before) {
      // Work exists but nothing could be scheduled (waiting on blocks held by nobody can't
      // happen; waiting for an arrival can): move to the next arrival or stop.
      if (pending_.empty()) {
        stalled_ = true;
        return;
      }
      now_ = std::max(now_, pending_.front().first);
    }
  }
}

}  // namespace fleetsim
