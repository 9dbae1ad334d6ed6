#include "engine/instance.h"

#include <algorithm>
#include <iterator>
#include <tuple>
#include <utility>

#include "core/check.h"

namespace fleetsim {

Instance::Instance(const SchedulerConfig& config, const KvCacheLayout& layout, int64_t num_blocks,
                   bool prefix_caching, const StepCostModel& cost)
    : kv_(layout, num_blocks, prefix_caching),
      scheduler_(config, kv_),
      cost_(cost),
      config_(config),
      decode_cost_(cost) {}

void Instance::Arrive(std::unique_ptr<Request> request, SimTime arrival) {
  // A decode instance's arrivals come from transfers of different lengths: one handed
  // over later may arrive earlier. Usually this is the back.
  auto at = pending_.end();
  while (at != pending_.begin()) {
    const auto& before = *std::prev(at);
    if (std::tie(before.first, before.second->id) <= std::tie(arrival, request->id)) break;
    --at;
  }
  FLEETSIM_CHECK(arrival >= last_admitted_,
                 "a request arrives at an instance before one it already admitted");
  pending_.emplace(at, arrival, std::move(request));
  stalled_ = false;
}

SimTime Instance::NextWake() const {
  SimTime next = kNever;
  if (!pending_.empty()) next = pending_.front().first;
  if (!sending_.empty()) next = std::min(next, sending_.begin()->first.first);
  return next;
}

SimTime Instance::NextEventTime() const {
  if (stalled_) return kNever;
  if (!scheduler_.idle()) return now_;
  const SimTime next = NextWake();
  return next == kNever ? kNever : std::max(now_, next);
}

void Instance::ReleaseSentUpTo(SimTime t) {
  while (!sending_.empty() && sending_.begin()->first.first <= t) {
    kv_.Free(*sending_.begin()->second);
    sending_.erase(sending_.begin());
  }
}

void Instance::HandOff(Request& request, SimTime first_token) {
  RequestRecord& record = RecordOf(request);
  record.handed_off = true;
  const SimTime sent = on_hand_off_ ? on_hand_off_(request, record) : first_token;
  FLEETSIM_CHECK(sent >= first_token, "a request's KV is sent before its first token");
  for (auto& live : live_) {
    if (live.get() != &request) continue;
    sending_.emplace(std::make_pair(sent, request.id), std::move(live));
    break;
  }
}

void Instance::Settle(Request& request) {
  RequestRecord& record = RecordOf(request);
  record.output_tokens = request.num_output;
  record.cached_tokens = request.cached_tokens;
  record.preemptions = request.num_preemptions;
  settled_.push_back(std::move(record));
  free_slots_.push_back(request.slot);
  request.slot = -1;
}

std::vector<RequestRecord> Instance::TakeRecords() {
  std::vector<RequestRecord> out;
  out.swap(settled_);
  return out;
}

void Instance::ForgetEndedConversations(SimTime arrived_before) {
  if (!kv_.has_family_records()) return;
  std::vector<uint64_t> here;
  for (const auto& [at, request] : pending_) {
    if (request->family != 0) here.push_back(request->family);
  }
  for (const auto& request : live_) {
    if (request->family != 0) here.push_back(request->family);
  }
  std::sort(here.begin(), here.end());
  kv_.ForgetEndedRecords(arrived_before, here);
}

void Instance::FlushPending() {
  EndDecodeRun();
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
    last_admitted_ = arrival;
    RequestRecord record;
    record.id = request->id;
    record.name = request->name;
    record.arrival = arrival;
    record.queued = t == kNever ? arrival : std::max(arrival, t);
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

void Instance::PrepareSchedule() {
  AdmitArrivalsUpTo(Lagged() ? step_start_ : now_);
}

bool Instance::Unlag() {
  if (!Lagged()) return false;
  step_end_ = -1;
  return true;
}

void Instance::HideLastFinishes(bool lagged) {
  kv_.Reserve(lagged ? last_freed_ : 0);
  scheduler_.Hold(lagged ? last_finished_ : 0);
}

void Instance::AddChunk(const ScheduledChunk& chunk, BatchShape& shape) {
  const Request& r = *chunk.request;
  if (chunk.drafts > 0) {
    shape.AddSpeculativeDecode(chunk.computed_before, chunk.num_tokens);
  } else if (chunk.computed_before >= r.num_tokens() - 1 && chunk.num_tokens == 1 &&
             chunk.computed_before >= r.prompt_tokens) {
    shape.AddDecode(chunk.computed_before);
  } else {
    const bool samples = chunk.computed_before + chunk.num_tokens >= r.num_tokens();
    shape.AddPrefill(chunk.num_tokens, chunk.computed_before, samples);
  }
}

BatchShape Instance::ShapeOf(const StepPlan& plan) const {
  BatchShape shape;
  for (const ScheduledChunk& chunk : plan.chunks)
    AddChunk(chunk, shape);
  return shape;
}

void Instance::RunStep() {
  const std::optional<BatchShape> shape = PlanStep();
  if (shape) FinishStep(*shape, cost_.Cost(*shape).total_ns);
}

std::optional<BatchShape> Instance::BeginLockStep(SimTime at) {
  FLEETSIM_CHECK(at >= now_, "a lock-step starts no earlier than the instance's clock");
  now_ = at;
  if (!pending_.empty() && pending_.front().first <= now_) last_active_ = now_;
  PrepareSchedule();
  if (!scheduler_.idle()) {
    if (std::optional<BatchShape> shape = PlanStep()) return shape;
  }
  if (!Unlag()) return std::nullopt;
  PrepareSchedule();
  if (scheduler_.idle()) return std::nullopt;
  return PlanStep();
}

void Instance::FinishLockStep(const BatchShape& shape, SimTime duration) {
  FinishStep(shape, duration);
}

void Instance::IdleUntil(SimTime at) {
  FLEETSIM_CHECK(at >= now_, "an idle instance's clock only moves forward");
  now_ = at;
}

SimTime Instance::NextArrival() const {
  return pending_.empty() ? kNever : pending_.front().first;
}

std::optional<BatchShape> Instance::PlanStep() {
  EndDecodeRun();
  HideLastFinishes(Lagged());
  const StepPlan& plan = scheduler_.Schedule();
  HideLastFinishes(false);
  if (plan.empty()) return std::nullopt;
  planned_ = &plan;
  if (record_scheduled_) NoteScheduled();
  return ShapeOf(plan);
}

void Instance::FinishStep(const BatchShape& shape, SimTime duration) {
  FLEETSIM_CHECK(planned_ != nullptr, "a step finishes only after it was planned");
  const StepPlan& plan = *planned_;
  planned_ = nullptr;
  const SimTime start = now_;
  last_active_ = start;
  const SimTime end = start + duration;
  last_finished_ = last_freed_ = 0;
  const int64_t generated = SettleChunks(plan, start, end);
  step_start_ = start;
  step_end_ = end;
  ++steps_;
  busy_ += duration;
  now_ = end;
  Tally(end, PromptTokensOf(shape), generated);
  if (on_step_) {
    StepRecord step;
    step.start = start;
    step.duration = duration;
    DescribeBatch(shape, step);
    step.draft_tokens = scheduler_.step_drafts();
    step.accepted_tokens = scheduler_.step_accepted();
    step.generated_tokens = generated;
    step.preemptions = static_cast<int64_t>(plan.preempted.size());
    for (const ScheduledChunk& chunk : plan.chunks)
      step.cache_hit_tokens += chunk.cached_tokens;
    step.running = static_cast<int64_t>(scheduler_.running().size());
    step.waiting = static_cast<int64_t>(scheduler_.waiting().size());
    step.kv_usage = kv_.Usage();
    if (record_scheduled_) CopyScheduled(step);
    on_step_(step);
  }
}

int64_t Instance::SettleChunks(const StepPlan& plan, SimTime start, SimTime end) {
  // A request is first scheduled when first admitted, and its first token comes in the
  // step its output leaves zero; output, prefix-hit and preemption counts go into its
  // record when it settles. So only such steps touch records.
  for (const ScheduledChunk& chunk : plan.chunks) {
    if (!chunk.admitted) continue;
    RequestRecord& record = RecordOf(*chunk.request);
    record.first_scheduled = std::min(record.first_scheduled, start);
  }
  const std::vector<Request*>& finished = scheduler_.Complete(plan);
  int64_t generated = 0;
  for (const ScheduledChunk& chunk : plan.chunks) {
    const Request& r = *chunk.request;
    generated += r.num_output - chunk.output_before;
    if (chunk.output_before == 0 && r.num_output >= 1) RecordOf(r).first_token = end;
  }
  for (Request* r : finished) {
    RequestRecord& record = RecordOf(*r);
    record.finish = end;
    record.state = RequestState::kFinished;
    if (r->remote_decode) HandOff(*r, end);
    Settle(*r);
  }
  last_finished_ += std::ssize(finished);
  last_freed_ += scheduler_.step_freed_blocks();
  if (!finished.empty()) {
    std::erase_if(live_, [](const std::unique_ptr<Request>& r) {
      return r == nullptr || r->state == RequestState::kFinished;
    });
  }
  return generated;
}

void Instance::NoteScheduled() {
  scheduled_.running = static_cast<int64_t>(scheduler_.running().size());
  scheduled_.waiting = static_cast<int64_t>(scheduler_.waiting().size());
  scheduled_.kv_usage = kv_.Usage();
}

void Instance::CopyScheduled(StepRecord& record) const {
  record.scheduled_running = scheduled_.running;
  record.scheduled_waiting = scheduled_.waiting;
  record.scheduled_kv_usage = scheduled_.kv_usage;
}

void Instance::RunUntil(SimTime until) {
  while (now_ < until) {
    if (!pending_.empty() && pending_.front().first <= now_) last_active_ = now_;
    if (!sending_.empty()) ReleaseSentUpTo(now_);  // only prefill instances send
    PrepareSchedule();
    if (FastDecode(until)) continue;
    if (scheduler_.idle()) {
      if (Unlag()) continue;
      // Nothing to run: jump to the next arrival or release of sent blocks -- not past
      // `until`, where an arrival handed over later may still come before a release.
      const SimTime next = NextWake();
      if (next == kNever || next >= until) return;
      now_ = std::max(now_, next);
      continue;
    }
    const int64_t before = steps_;
    RunStep();
    if (steps_ == before) {
      if (Unlag()) continue;
      // Work exists but nothing could be scheduled (waiting on blocks held by nobody can't
      // happen; waiting for an arrival or for sent blocks to be freed can): move to the
      // next of those or stop.
      const SimTime next = NextWake();
      if (next == kNever) {
        stalled_ = true;
        return;
      }
      now_ = std::max(now_, next);
    }
  }
}

}  // namespace fleetsim
