#include "engine/instance.h"

#include <algorithm>
#include <iterator>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "core/check.h"

namespace fleetsim {

namespace {

// A step record's batch fields, as the step's shape gives them.
// A step's prompt tokens: its chunks' tokens, draft tokens not counted.
int64_t PromptTokensOf(const BatchShape& shape) {
  return shape.prefill_tokens() - shape.spec_tokens();
}

void DescribeBatch(const BatchShape& shape, StepRecord& step) {
  step.prefill_tokens = PromptTokensOf(shape);
  step.prefill_chunks = shape.gdn_prefills();
  step.decodes = shape.num_decodes() + shape.num_spec_decodes();
  step.decode_context_mean = shape.mean_decode_context();
  step.decode_context_max = shape.max_decode_context();
}

}  // namespace

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

void Instance::EndDecodeRun() {
  if (!decode_run_) return;
  for (std::size_t i = 0; i < lanes_.size(); ++i)
    BringTo(i, decode_run_steps_);
  decode_run_ = false;
}

void Instance::BringTo(std::size_t lane, int64_t step) {
  DecodeLane& l = lanes_[lane];
  Request& r = *l.request;
  if (l.anonymous > 0 && step > l.next_work) {
    // The boundaries before `step` were taken as counts: list them.
    const int64_t block_size = kv_.layout().block_size;
    const int64_t boundaries = (step - 1 - l.next_work) / block_size + 1;
    kv_.ListAnonymousDecodeBlocks(r, boundaries);
    l.next_work += boundaries * block_size;
  }
  const int64_t steps = step - l.synced;
  if (steps == 0) return;
  r.num_computed += steps;
  r.num_output += steps;
  l.synced = step;
  kv_.CatchUpHashedBlocks(r);
}

Instance::DecodeLane Instance::MakeLane(Request& r, int64_t next_work, int64_t synced,
                                        int64_t anonymous) const {
  DecodeLane lane{&r, next_work, synced, anonymous};
  // A lane that joined the run later stands behind it: its context "at step 0" may be
  // negative.
  lane.context = r.num_computed - synced;
  // The run step whose token is the request's last: its counts as they stood at step 0.
  lane.end = std::min(r.max_output_tokens - (r.num_output - synced) - 1,
                      config_.max_model_len - (r.num_tokens() - synced) - 1);
  lane.hands_off = r.remote_decode;
  return lane;
}

void Instance::SumUpLanes() {
  // Contexts as they stood at the run's first step, whatever step each lane is synced to.
  // Summed in a local: the members could alias the lanes' fields, and would be stored back
  // at every lane.
  LaneSums sums = LaneSums::None();
  for (const DecodeLane& lane : lanes_)
    sums.Add(lane);
  lane_sums_ = sums;
}

int64_t Instance::NextAnonymousWork(int64_t from) const {
  if (anonymous_phases_.empty()) return INT64_MAX;
  const auto phases = static_cast<int64_t>(anonymous_by_phase_.size());
  // Few phases in use among many (a hybrid's big blocks): the nearest of them; else the
  // first phase in use from `from` on, a few steps away.
  if (4 * static_cast<int64_t>(anonymous_phases_.size()) < phases) {
    int64_t next = INT64_MAX;
    for (const int64_t phase : anonymous_phases_)
      next = std::min(next, from + (phase - from % phases + phases) % phases);
    return next;
  }
  // A listed phase has blocks (RemoveLaneWork unlists one it empties), so the scan ends
  // within a block's phases. (A check here costs about 1 % of the hybrid benchmark's
  // instructions through FastDecode's code, bench/RESULTS.md; the fast-decode equivalence
  // tests hold the invariant.)
  for (int64_t step = from;; ++step) {
    if (anonymous_by_phase_[static_cast<std::size_t>(step % phases)] > 0) return step;
  }
}

bool Instance::AnonymousDue(const DecodeLane& lane, int64_t step) const {
  const int64_t block_size = kv_.layout().block_size;
  return step >= lane.next_work && (step - lane.next_work) % block_size == 0;
}

void Instance::AddLaneWork(const DecodeLane& lane) {
  if (lane.anonymous > 0) {
    const auto phases = static_cast<int64_t>(anonymous_by_phase_.size());
    const int64_t phase = lane.next_work % phases;
    int64_t& blocks = anonymous_by_phase_[static_cast<std::size_t>(phase)];
    if (blocks == 0) anonymous_phases_.push_back(phase);
    blocks += lane.anonymous;
  } else {
    named_next_work_ = std::min(named_next_work_, lane.next_work);
  }
}

void Instance::RemoveLaneWork(const DecodeLane& lane) {
  if (lane.anonymous == 0) return;  // a named lane's next work is summed again by the caller
  // BringTo moves next_work by whole blocks: the lane's phase is the one it was counted at.
  const auto phases = static_cast<int64_t>(anonymous_by_phase_.size());
  const int64_t phase = lane.next_work % phases;
  int64_t& blocks = anonymous_by_phase_[static_cast<std::size_t>(phase)];
  blocks -= lane.anonymous;
  if (blocks == 0) std::erase(anonymous_phases_, phase);
}

void Instance::SumUpLaneWork(int64_t from) {
  // Only the phases in use are cleared when they are few: a hybrid's block holds hundreds
  // of tokens.
  const auto phases = static_cast<std::size_t>(kv_.layout().block_size);
  if (anonymous_by_phase_.size() != phases || 8 * anonymous_phases_.size() > phases) {
    anonymous_by_phase_.assign(phases, 0);
  } else {
    for (const int64_t phase : anonymous_phases_)
      anonymous_by_phase_[static_cast<std::size_t>(phase)] = 0;
  }
  anonymous_phases_.clear();
  named_next_work_ = INT64_MAX;
  for (const DecodeLane& lane : lanes_)
    AddLaneWork(lane);
  decode_next_work_ = std::min(named_next_work_, NextAnonymousWork(from));
}

bool Instance::Decoding(const Request& r) {
  return r.num_computed == r.num_tokens() - 1 && r.num_computed >= r.prompt_tokens;
}

bool Instance::StartDecodeRun() {
  const std::vector<Request*>& running = scheduler_.running();
  // Speculative steps are taken one by one: each request's emitted tokens are drawn.
  if (running.empty() || config_.speculative.enabled()) return false;
  // The leading decodes are the run's lanes; the requests after the first that does not
  // decode are its tail, scheduled one by one as Schedule would -- but not one whose KV is
  // handed off when it finishes (the ordinary step does that).
  std::size_t n = 0;
  while (n < running.size() && Decoding(*running[n]))
    ++n;
  if (n == 0 || static_cast<int64_t>(n) > config_.max_num_batched_tokens) return false;
  for (std::size_t i = n; i < running.size(); ++i) {
    if (running[i]->remote_decode) return false;
  }
  lanes_.resize(n);
  for (std::size_t i = 0; i < lanes_.size(); ++i) {
    Request& r = *running[i];
    lanes_[i] = MakeLane(r, kv_.DecodeStepsWithoutPoolWork(r), 0, kv_.AnonymousDecodeBlocks(r));
  }
  SumUpLanes();
  SumUpLaneWork(0);
  if (lane_sums_.end < 0) return false;  // a request past its end is not decoding
  decode_run_ = true;
  decode_run_steps_ = 0;
  decode_usage_ = kv_.Usage();
  decode_cost_.SetDecodes(static_cast<int64_t>(n));
  return true;
}

bool Instance::FinishingLanesHandOff(int64_t step) const {
  for (const DecodeLane& lane : lanes_) {
    if (lane.hands_off && lane.end == step) return true;
  }
  return false;
}

void Instance::FinishLane(std::size_t lane, int64_t step, SimTime end) {
  // As Scheduler::Complete and FinishStep settle a request whose last token this step
  // made; the caller goes in running order, so blocks return to the pool in its order.
  BringTo(lane, step + 1);
  Request& r = *lanes_[lane].request;
  r.state = RequestState::kFinished;
  const int64_t free_before = kv_.num_free_blocks();
  kv_.Free(r);
  ++last_finished_;
  last_freed_ += kv_.num_free_blocks() - free_before;
  RequestRecord& record = RecordOf(r);
  record.finish = end;
  record.state = RequestState::kFinished;
  Settle(r);
  lanes_[lane].request = nullptr;
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

void Instance::AddLane(Request& r, int64_t step) {
  // Counted as if it had been in the run from its first step: its context then, and its
  // counts, stand `step + 1` behind.
  const DecodeLane lane = MakeLane(r, step + 1 + kv_.DecodeStepsWithoutPoolWork(r), step + 1,
                                   kv_.AnonymousDecodeBlocks(r));
  lanes_.push_back(lane);
  lane_sums_.Add(lane);
  AddLaneWork(lane);
  decode_next_work_ = std::min(decode_next_work_, lane.next_work);
}

bool Instance::FastDecode(SimTime until) {
  if (!fast_decode_) return false;
  const SimTime next_arrival = pending_.empty() ? kNever : pending_.front().first;
  // An arrival the next schedule would see ends the run (RunUntil admits it first); under
  // async scheduling one that came during the last step does not.
  if (now_ >= until || (Lagged() ? step_start_ : now_) >= next_arrival) return false;
  if (!decode_run_) {
    if (!scheduler_.RunCanAdmit() || !StartDecodeRun()) return false;
  }

  const int64_t block_size = kv_.layout().block_size;
  const PrefixHit no_hit;
  int64_t step = decode_run_steps_;
  SimTime t = now_;
  bool ordinary_next = false;  // the next step must run the ordinary way
  bool lagged = Lagged();      // the steps of a run are back to back: lagged after the first
  SimTime horizon = Lagged() ? step_start_ : now_;  // the arrivals the next schedule sees
  while (!lanes_.empty() && t < until && horizon < next_arrival) {
    // Async scheduling: what the last step finished is hidden from this step's schedule,
    // as PlanStep hides it.
    HideLastFinishes(lagged);
    // The run's tail -- running requests after the decodes, a prompt split at block
    // boundaries or admitted beside them -- and arrivals take chunks as Schedule gives
    // them, beside the decodes; they join the decodes once they decode. Arrivals computed
    // or decoded elsewhere, and a pool too short for the tail's chunks (a preemption),
    // need the ordinary step.
    const auto n = static_cast<int64_t>(lanes_.size());
    const bool tail = scheduler_.running().size() > lanes_.size();
    const bool admitting = !scheduler_.waiting().empty();
    if (admitting && !scheduler_.RunCanAdmit()) {
      ordinary_next = true;
      break;
    }
    // Until the next step with pool work or a finish, with no tail and nothing waiting, a
    // step changes nothing but the clock: such steps are priced and recorded in a tight
    // loop, each as the general step below would.
    if (const int64_t quiet_end = std::min(decode_next_work_, lane_sums_.end);
        !tail && !admitting && step < quiet_end) {
      t = QuietSteps(step, quiet_end, t, until, next_arrival);
      horizon = AdmissionHorizon(step_start_, t);
      last_finished_ = last_freed_ = 0;
      lagged = config_.async_scheduling;
      continue;
    }
    // The free blocks the tail's chunks take at most.
    const int64_t tail_blocks = tail ? scheduler_.TailBlocks(n) : 0;
    // A step that ends a request ends it here, unless its KV is handed off (the ordinary
    // step does that).
    const bool finishing = step == lane_sums_.end;
    if (finishing && lane_sums_.hand_offs > 0 && FinishingLanesHandOff(step)) {
      ordinary_next = true;
      break;
    }
    const bool pool_work = step == decode_next_work_;
    const bool named_work = step == named_next_work_;
    // The first step with work is the earlier of the named and the anonymous lanes': a step
    // with named work has pool work, and its due lanes are listed there.
    FLEETSIM_CHECK(pool_work || !named_work, "a decode run's named work came before its pool work");
    if (pool_work) {
      // As the scheduler's step would, in running order -- unless the pool might run
      // short, which needs the ordinary step (it preempts).
      // A lane whose boundaries take only anonymous blocks takes them as a count (its
      // request is listed them later, BringTo), and such lanes are summed by their phase
      // at a boundary: a step where only they have work looks at no lane. Lanes that
      // allocate for real go in running order among the others.
      int64_t needed = 0;
      if (!named_work) {
        needed = anonymous_by_phase_[static_cast<std::size_t>(step % block_size)];
      } else {
        due_lanes_.clear();
        other_named_next_work_ = INT64_MAX;
        for (std::size_t i = 0; i < lanes_.size(); ++i) {
          DecodeLane& lane = lanes_[i];
          if (lane.anonymous > 0) {
            if (!AnonymousDue(lane, step)) continue;
            needed += lane.anonymous;
          } else if (lane.next_work == step) {
            BringTo(i, step);
            needed += kv_.DecodeBlocksNeeded(*lane.request);
          } else {
            other_named_next_work_ = std::min(other_named_next_work_, lane.next_work);
            continue;
          }
          due_lanes_.push_back(i);
        }
      }
      if (needed + tail_blocks > kv_.num_free_blocks()) {
        ordinary_next = true;
        break;
      }
      if (!named_work) {
        FLEETSIM_CHECK(kv_.TakeAnonymousDecodeBlocks(needed),
                       "a decode step's blocks were counted free");
      } else {
        for (const std::size_t i : due_lanes_) {
          DecodeLane& lane = lanes_[i];
          const bool allocated = lane.anonymous > 0 ? kv_.TakeAnonymousDecodeBlocks(lane.anonymous)
                                                    : kv_.Allocate(*lane.request, 1, no_hit, false);
          FLEETSIM_CHECK(allocated, "a decode step's blocks were counted free");
        }
      }
      decode_usage_ = kv_.Usage();
      ++fast_decode_pool_steps_;
    } else if (tail_blocks > kv_.num_free_blocks()) {
      ordinary_next = true;
      break;
    }
    const int64_t context_sum = lane_sums_.context_sum + step * n;
    const int64_t context_min = lane_sums_.context_min + step;
    const int64_t context_max = lane_sums_.context_max + step;
    // The tail's chunks, then arrivals' as the pool and the budget allow (else they wait),
    // as Schedule orders them.
    const StepPlan* plan = tail || admitting ? &scheduler_.PlanRunStep(n) : nullptr;
    // Planned: what the step finishes is counted afresh for the next one.
    HideLastFinishes(false);
    last_finished_ = last_freed_ = 0;
    lagged = config_.async_scheduling;
    const bool chunks = plan != nullptr && !plan->chunks.empty();
    BatchShape shape;  // a step with other chunks is costed like the ordinary one
    SimTime duration = 0;
    if (chunks) {
      shape.AddDecodes(n, context_sum, context_min, context_max);
      for (const ScheduledChunk& chunk : plan->chunks)
        AddChunk(chunk, shape);
      duration = cost_.Cost(shape).total_ns;
      decode_usage_ = kv_.Usage();
    } else {
      duration = decode_cost_.TotalNs(context_sum, context_min, context_max);
    }
    if (record_scheduled_) NoteScheduled();
    const SimTime start = t;
    last_active_ = t;
    step_start_ = t;
    t += duration;
    if (named_work && !finishing) {
      // Only the lanes that allocated commit; the others' next work is as it was.
      named_next_work_ = other_named_next_work_;
      for (const std::size_t i : due_lanes_) {
        DecodeLane& lane = lanes_[i];
        if (lane.anonymous > 0) continue;
        BringTo(i, step + 1);
        kv_.CommitStep(*lane.request);
        lane.next_work = step + 1 + kv_.DecodeStepsWithoutPoolWork(*lane.request);
        named_next_work_ = std::min(named_next_work_, lane.next_work);
      }
    } else if (finishing) {
      // The step's commits (only lanes that allocate for real have any) and finishes, in
      // running order (Scheduler::Complete's), and each of those lanes' next step with work.
      named_next_work_ = INT64_MAX;
      for (std::size_t i = 0; i < lanes_.size(); ++i) {
        DecodeLane& lane = lanes_[i];
        if (lane.anonymous == 0 && lane.next_work == step) {
          BringTo(i, step + 1);
          kv_.CommitStep(*lane.request);
          lane.next_work = step + 1 + kv_.DecodeStepsWithoutPoolWork(*lane.request);
        }
        if (lane.end == step) {
          RemoveLaneWork(lane);
          FinishLane(i, step, t);
          continue;
        }
        if (lane.anonymous == 0) named_next_work_ = std::min(named_next_work_, lane.next_work);
      }
      std::erase_if(lanes_, [](const DecodeLane& lane) { return lane.request == nullptr; });
      scheduler_.DropFinished();
      std::erase_if(live_, [](const std::unique_ptr<Request>& r) {
        return r == nullptr || r->state == RequestState::kFinished;
      });
      SumUpLanes();
      // The lanes' work as SumUpLaneWork would sum it: the finished lanes' blocks left
      // their phases above, and named_next_work_ was taken over the lanes left.
      decode_next_work_ = std::min(named_next_work_, NextAnonymousWork(step + 1));
      if (!lanes_.empty()) decode_cost_.SetDecodes(static_cast<int64_t>(lanes_.size()));
      decode_usage_ = kv_.Usage();
    }
    if (pool_work && !finishing)
      decode_next_work_ = std::min(named_next_work_, NextAnonymousWork(step + 1));
    // The chunks' requests come after the decodes in running order: they complete after
    // them, and those that decode now join the decodes (the leading ones: lanes stay in
    // running order).
    int64_t chunk_tokens = 0;
    int64_t hit_tokens = 0;
    if (chunks) {
      chunk_tokens = SettleChunks(*plan, start, t);
      for (const ScheduledChunk& chunk : plan->chunks)
        hit_tokens += chunk.cached_tokens;
      const std::vector<Request*>& running = scheduler_.running();
      const std::size_t before = lanes_.size();
      while (lanes_.size() < running.size() && Decoding(*running[lanes_.size()]))
        AddLane(*running[lanes_.size()], step);
      if (lanes_.size() != before) decode_cost_.SetDecodes(static_cast<int64_t>(lanes_.size()));
      decode_usage_ = kv_.Usage();
    }
    Tally(t, chunks ? PromptTokensOf(shape) : 0, n + chunk_tokens);
    if (on_step_) {
      StepRecord record = RunStepRecord(start, duration, n, context_sum, context_max);
      if (chunks) {
        DescribeBatch(shape, record);
        record.generated_tokens = n + chunk_tokens;
        record.cache_hit_tokens = hit_tokens;
      }
      on_step_(record);
    }
    ++step;
    horizon = AdmissionHorizon(start, t);
  }
  HideLastFinishes(false);
  const int64_t steps = step - decode_run_steps_;
  decode_run_steps_ = step;
  // Past the window's end, or at the next arrival, the run goes on in the next call.
  if (ordinary_next || lanes_.empty()) EndDecodeRun();
  if (steps == 0) return false;
  steps_ += steps;
  fast_decode_steps_ += steps;
  busy_ += t - now_;
  now_ = t;
  step_end_ = t;
  return true;
}

StepRecord Instance::RunStepRecord(SimTime start, SimTime duration, int64_t decodes,
                                   int64_t context_sum, int64_t context_max) const {
  StepRecord record;
  record.start = start;
  record.duration = duration;
  record.decodes = decodes;
  record.decode_context_mean = static_cast<double>(context_sum) / static_cast<double>(decodes);
  record.decode_context_max = context_max;
  record.generated_tokens = decodes;
  record.running = static_cast<int64_t>(scheduler_.running().size());
  record.waiting = static_cast<int64_t>(scheduler_.waiting().size());
  record.kv_usage = decode_usage_;
  if (record_scheduled_) CopyScheduled(record);
  return record;
}

SimTime Instance::QuietSteps(int64_t& step, int64_t end, SimTime t, SimTime until,
                             SimTime arrival) {
  const auto n = static_cast<int64_t>(lanes_.size());
  // Quiet steps schedule nothing that changes the queues or the pool.
  if (record_scheduled_) NoteScheduled();
  do {
    const int64_t context_sum = lane_sums_.context_sum + step * n;
    const int64_t context_max = lane_sums_.context_max + step;
    const SimTime duration =
        decode_cost_.TotalNs(context_sum, lane_sums_.context_min + step, context_max);
    last_active_ = t;
    step_start_ = t;
    Tally(t + duration, 0, n);
    if (on_step_) on_step_(RunStepRecord(t, duration, n, context_sum, context_max));
    t += duration;
    ++step;
  } while (step < end && t < until && AdmissionHorizon(step_start_, t) < arrival);
  return t;
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

namespace {

void SaveRecord(CheckpointWriter& w, const RequestRecord& record) {
  w.I64(record.id);
  w.Str(record.name);
  w.I64(record.arrival);
  w.I64(record.queued);
  w.I64(record.first_scheduled);
  w.I64(record.first_token);
  w.I64(record.finish);
  w.I64(record.input_tokens);
  w.I64(record.output_tokens);
  w.I64(record.cached_tokens);
  w.I32(record.preemptions);
  w.I32(static_cast<int32_t>(record.state));
  w.I32(static_cast<int32_t>(record.reject_reason));
  w.Bool(record.handed_off);
}

RequestRecord LoadRecord(CheckpointReader& r) {
  RequestRecord record;
  record.id = r.I64();
  record.name = r.Str();
  record.arrival = r.I64();
  record.queued = r.I64();
  record.first_scheduled = r.I64();
  record.first_token = r.I64();
  record.finish = r.I64();
  record.input_tokens = r.I64();
  record.output_tokens = r.I64();
  record.cached_tokens = r.I64();
  record.preemptions = r.I32();
  const int32_t state = r.I32();
  const int32_t reason = r.I32();
  r.Require(state >= 0 && state <= static_cast<int32_t>(RequestState::kRejected) && reason >= 0 &&
                reason <= static_cast<int32_t>(RejectReason::kExceedsKvCache),
            "request record state");
  record.state = static_cast<RequestState>(state);
  record.reject_reason = static_cast<RejectReason>(reason);
  record.handed_off = r.Bool();
  return record;
}

void SaveRecords(CheckpointWriter& w, const std::vector<RequestRecord>& records) {
  w.U64(records.size());
  for (const RequestRecord& record : records)
    SaveRecord(w, record);
}

std::vector<RequestRecord> LoadRecords(CheckpointReader& r) {
  std::vector<RequestRecord> records(r.Count(8));
  for (RequestRecord& record : records)
    record = LoadRecord(r);
  return records;
}

}  // namespace

// A field added to RequestRecord or Instance must be saved below: these sizes change with
// it (the round-trip test in tests/engine/checkpoint_test.cc catches what padding hides).
// (2,624: the cache layout's MTP attention-layer fields, configuration rebuilt from the
// cluster config on restart, not state; 2,864: caches and sums a decode run rebuilds from
// its lanes in Load -- the decode-cost cache's use stamps, table positions and skew
// bucket, the lanes' work by boundary phase, the count of lanes that hand off; 2,096: one
// decode run's cost cursor instead of four cached batch sizes, the prices being the cost
// model's; 2,112: the list of boundary phases in use; 2,120: the block pool's count of
// cached keys, which Load recounts from the blocks; 2,152: the decode cost cursor's last
// step, a cache of the skew rate that a fresh cursor rebuilds to the same prices; 2,168:
// the token tally's interval and target, the caller's like the step observer; 2,200: a
// decode step's list of due lanes and the other named lanes' next work, scratch that no
// step leaves for the next; 2,272: async scheduling's last step start and end, and the
// requests that step finished with the blocks they freed; the block pool's reservation
// is set before every schedule, not state; 2,360: the block pool's chains of blocks cached
// under one key, out of the block states into a map of their own, saved with the pool;
// 2,368: the place of the free queue's first entry, saved with the pool; 2,376: the prefix
// index's count of slots in use, which Load recounts from the slots; 2,480: the block pool's
// numbering of anonymous blocks, saved with the pool, and the KV cache manager's
// conversations -- records saved with it, holders restored from the live requests, a
// count for tests that is not state; 2,488: a second such count; 1,848: the cache layout's
// attention plan shared between instances instead of copied into each -- configuration,
// not state; 1,872: the queues and the pool as the step in progress was scheduled, scratch
// that no checkpoint is taken across, and whether records carry them, the caller's setting
// like the step observer.)
static_assert(sizeof(RequestRecord) == 120,
              "RequestRecord changed: save the new field in SaveRecord/LoadRecord");
static_assert(sizeof(Instance) == 1872,
              "Instance changed: save the new field in Instance::Save/Load");

void Instance::Save(CheckpointWriter& w) const {
  // A window boundary is never between PlanStep and FinishStep. The hand-off hook, like
  // the step observer, is the caller's.
  FLEETSIM_CHECK(planned_ == nullptr, "a checkpoint is taken between steps");
  kv_.Save(w);
  w.I64(now_);
  w.I64(last_active_);
  w.I64(last_admitted_);
  w.I64(step_start_);
  w.I64(step_end_);
  w.I64(last_finished_);
  w.I64(last_freed_);
  w.U64(pending_.size());
  for (const auto& [arrival, request] : pending_) {
    w.I64(arrival);
    request->Save(w);
  }
  std::unordered_map<const Request*, int64_t> index_of;
  w.U64(live_.size());
  for (const std::unique_ptr<Request>& request : live_) {
    index_of.emplace(request.get(), static_cast<int64_t>(index_of.size()));
    request->Save(w);
  }
  const auto index = [&](const Request* r) { return index_of.at(r); };
  scheduler_.Save(w, index);
  // Handed-off requests holding their blocks until their KV is sent (prefill instances).
  w.U64(sending_.size());
  for (const auto& [key, request] : sending_) {
    w.I64(key.first);
    request->Save(w);
  }
  SaveRecords(w, slots_);
  w.Pods(free_slots_);
  SaveRecords(w, settled_);
  w.Bool(stalled_);
  w.I64(steps_);
  w.I64(busy_);
  w.I64(fast_decode_steps_);
  w.I64(fast_decode_pool_steps_);
  // A decode run goes on past a window's end: its lanes, by the request's place in live_.
  w.Bool(decode_run_);
  w.U64(lanes_.size());
  for (const DecodeLane& lane : lanes_) {
    w.I64(decode_run_ ? index(lane.request) : -1);
    w.I64(lane.next_work);
    w.I64(lane.synced);
    w.I64(lane.anonymous);
  }
  w.I64(decode_run_steps_);
  w.I64(lane_sums_.end);
  w.I64(decode_next_work_);
  w.I64(lane_sums_.context_sum);
  w.I64(lane_sums_.context_min);
  w.I64(lane_sums_.context_max);
  w.F64(decode_usage_);
  // Its tail, the running requests after its lanes (a check: it follows from them).
  w.U64(decode_run_ ? scheduler_.running().size() - lanes_.size() : 0);
}

void Instance::Load(CheckpointReader& r) {
  FLEETSIM_CHECK(pending_.empty() && live_.empty() && sending_.empty() && steps_ == 0,
                 "a checkpoint is loaded into a fresh instance");
  kv_.Load(r);
  now_ = r.I64();
  last_active_ = r.I64();
  last_admitted_ = r.I64();
  step_start_ = r.I64();
  step_end_ = r.I64();
  last_finished_ = r.I64();
  last_freed_ = r.I64();
  const std::size_t groups = kv_.layout().groups.size();
  const uint64_t pending = r.Count(8);
  for (uint64_t i = 0; i < pending; ++i) {
    const SimTime arrival = r.I64();
    auto request = std::make_unique<Request>();
    request->Load(r, groups);
    pending_.emplace_back(arrival, std::move(request));
  }
  std::vector<Request*> by_index;
  live_.resize(r.Count(8));
  for (std::unique_ptr<Request>& request : live_) {
    request = std::make_unique<Request>();
    request->Load(r, groups);
    by_index.push_back(request.get());
  }
  scheduler_.Load(r, by_index);
  kv_.RestoreFamilyHolders(by_index, r);
  const uint64_t sending = r.Count(8);
  for (uint64_t i = 0; i < sending; ++i) {
    const SimTime sent = r.I64();
    auto request = std::make_unique<Request>();
    request->Load(r, groups);
    r.Require(request->slot < 0 && request->state == RequestState::kFinished,
              "a request whose KV is being sent");
    const int64_t id = request->id;
    r.Require(sending_.emplace(std::make_pair(sent, id), std::move(request)).second,
              "a request sent twice");
  }
  slots_ = LoadRecords(r);
  free_slots_ = r.Pods<int64_t>();
  settled_ = LoadRecords(r);
  for (const Request* request : by_index)
    r.Require(request->slot >= 0 && request->slot < static_cast<int64_t>(slots_.size()),
              "request's record slot");
  stalled_ = r.Bool();
  steps_ = r.I64();
  busy_ = r.I64();
  fast_decode_steps_ = r.I64();
  fast_decode_pool_steps_ = r.I64();
  decode_run_ = r.Bool();
  lanes_.resize(r.Count(32));
  for (DecodeLane& lane : lanes_) {
    const int64_t at = r.I64();
    if (decode_run_) {
      r.Require(at >= 0 && at < static_cast<int64_t>(by_index.size()), "decode lane's request");
      lane.request = by_index[static_cast<std::size_t>(at)];
    } else {
      lane.request = nullptr;
    }
    lane.next_work = r.I64();
    lane.synced = r.I64();
    lane.anonymous = r.I64();
    // What the lane keeps of its request follows from the request.
    if (lane.request != nullptr)
      lane = MakeLane(*lane.request, lane.next_work, lane.synced, lane.anonymous);
  }
  decode_run_steps_ = r.I64();
  lane_sums_.end = r.I64();
  decode_next_work_ = r.I64();
  lane_sums_.context_sum = r.I64();
  lane_sums_.context_min = r.I64();
  lane_sums_.context_max = r.I64();
  decode_usage_ = r.F64();
  const uint64_t tail = r.U64();
  r.Require(tail == (decode_run_ ? scheduler_.running().size() - lanes_.size() : 0),
            "a decode run's lanes lead the running requests");
  // What a run sums over its lanes is summed again (its work by phase is not saved); the
  // saved sums must agree.
  if (decode_run_) {
    const auto summed = std::tie(lane_sums_.end, lane_sums_.context_sum, lane_sums_.context_min,
                                 lane_sums_.context_max, decode_next_work_);
    const auto saved =
        std::make_tuple(lane_sums_.end, lane_sums_.context_sum, lane_sums_.context_min,
                        lane_sums_.context_max, decode_next_work_);
    SumUpLanes();
    SumUpLaneWork(decode_run_steps_);
    r.Require(summed == saved, "a decode run's sums match its lanes");
  }
  // The step costs of a run's batch size are a cache, a function of the cost model alone.
  if (decode_run_) decode_cost_.SetDecodes(static_cast<int64_t>(lanes_.size()));
}

}  // namespace fleetsim
