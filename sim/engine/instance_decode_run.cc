// The decode runs of an Instance: between arrivals, a batch of decodes alone advances
// as lanes whose cost is summed per step, not a schedule per step (instance.h).

#include <algorithm>

#include "core/check.h"
#include "engine/instance.h"

namespace fleetsim {

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

}  // namespace fleetsim
