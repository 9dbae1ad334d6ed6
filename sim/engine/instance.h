// One serving instance in simulated time: requests arrive, and the engine runs steps
// back to back while it has work -- each step is the batch the scheduler forms, lasting
// what the step-cost model charges for it. Single-threaded, no MPI.
//
// When the scheduler sees a request follows vLLM's engine loop (v1/engine/core.py). Without
// async scheduling a request that arrives while step K runs is taken in at K's end and
// joins K+1. With it (vLLM's default, `step_with_batch_queue` with two batches in flight)
// step K+1 is scheduled when K starts, so what happens during K -- arrivals, and the
// blocks and sequence slots of requests that finish in K -- is seen by K+2's schedule:
// such an arrival joins K+2, and a finished request's slot and blocks are still held for
// K+1's schedule (vLLM's scheduler skips it, having reached max_tokens; here they are
// freed at K's end but hidden from that schedule). When K+1's schedule finds nothing to
// run, vLLM schedules again at K's end with everything up to then.
//
//   Instance instance(scheduler_config, layout, num_blocks, prefix_caching, cost_model);
//   instance.Arrive(std::move(request), arrival_time);   // in arrival order
//   instance.RunUntil(kNever);                       // or a window end
//   for (const RequestRecord& r : instance.TakeRecords()) ...   // settled ones
//
// Memory is bounded by the live requests: a request's record moves out of its slot when
// it settles (finishes, is rejected, or is flushed unfinished at a horizon), and a caller
// that takes the settled records as it goes keeps nothing else.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/sim_time.h"
#include "engine/kv_cache_manager.h"
#include "engine/scheduler.h"
#include "engine/token_tally.h"
#include "perf/step_cost.h"

namespace fleetsim {

// The outcome of one request: its times and its one terminal state.
struct RequestRecord {
  int64_t id = 0;
  std::string name;
  SimTime arrival = 0;
  // When the engine loop took it in (vLLM's queued_ts): the first step boundary at or
  // after its arrival, or the arrival when the engine was idle.
  SimTime queued = kNever;
  SimTime first_scheduled = kNever;
  SimTime first_token = kNever;
  SimTime finish = kNever;
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;  // produced
  int64_t cached_tokens = 0;
  int preemptions = 0;
  RequestState state = RequestState::kWaiting;
  RejectReason reject_reason = RejectReason::kNone;
  // Finished on a prefill instance and handed to a decode instance (Instance::OnHandOff):
  // not the request's terminal record.
  bool handed_off = false;
};

// One executed step, for /steps and validation.
struct StepRecord {
  SimTime start = 0;
  SimTime duration = 0;
  int64_t prefill_tokens = 0;
  int64_t prefill_chunks = 0;
  int64_t decodes = 0;             // decoding requests, speculative ones included
  double decode_context_mean = 0;  // the plain decodes' cached contexts: mean and longest
  int64_t decode_context_max = 0;
  int64_t generated_tokens = 0;  // output tokens the step produced (decodes + last chunks)
  int64_t draft_tokens = 0;      // speculative decoding: drafts verified, and accepted
  int64_t accepted_tokens = 0;
  int64_t preemptions = 0;
  int64_t cache_hit_tokens = 0;  // prefix hits of requests admitted in this step
  int64_t running = 0;           // after the step
  int64_t waiting = 0;
  double kv_usage = 0;
  // The queues and the pool once the step was scheduled, before it ran. Under async
  // scheduling vLLM schedules a step before it processes the previous one's outputs, so
  // its stats at the previous step's end read these (v1/engine/core.py
  // step_with_batch_queue: schedule, then update_from_output and make_stats).
  int64_t scheduled_running = 0;
  int64_t scheduled_waiting = 0;
  double scheduled_kv_usage = 0;
};

class Instance {
 public:
  Instance(const SchedulerConfig& config, const KvCacheLayout& layout, int64_t num_blocks,
           bool prefix_caching, const StepCostModel& cost);

  // Hands a request to the engine at `arrival`: not before the time it has run to, and
  // taken in (arrival, id) order whatever order the calls come in.
  void Arrive(std::unique_ptr<Request> request, SimTime arrival);
  // Prefill/decode disaggregation: called when a request marked remote_decode produces its
  // first token (its record complete up to there), returning when its KV has been sent;
  // the request keeps its blocks until then (docs/DISAGGREGATION.md).
  using HandOffHook = std::function<SimTime(const Request&, const RequestRecord&)>;
  void OnHandOff(HandOffHook hand_off) { on_hand_off_ = std::move(hand_off); }
  // Requests whose KV is still being sent.
  int64_t num_sending() const { return static_cast<int64_t>(sending_.size()); }
  // The running requests after a decode run's lanes, which it schedules one by one (a
  // prompt split at block boundaries, an arrival admitted beside the decodes); 0 without
  // a run.
  int64_t decode_run_tail() const {
    return decode_run_ ? static_cast<int64_t>(scheduler_.running().size() - lanes_.size()) : 0;
  }
  // Runs every step that starts before `until`; a step in progress may end after it.
  void RunUntil(SimTime until);
  // Whether stretches of pure-decode steps are advanced in bulk (on by default); off
  // steps one by one, which must give identical results.
  void SetFastDecode(bool on) { fast_decode_ = on; }
  int64_t fast_decode_steps() const { return fast_decode_steps_; }
  // Of those, the steps that had pool work (a block boundary, a release, a commit).
  int64_t fast_decode_pool_steps() const { return fast_decode_pool_steps_; }
  // Called at every step end with the step's record; empty by default.
  void OnStep(std::function<void(const StepRecord&)> observer) { on_step_ = std::move(observer); }
  // Whether the records carry the queues and the pool as each step was scheduled
  // (StepRecord::scheduled_*, for comparing with vLLM's own stats); off by default, as
  // it costs every step a look at the queues.
  void RecordScheduledState(bool on) { record_scheduled_ = on; }
  // Adds every step's prompt and generated tokens to `tally`, by the `interval` its end
  // falls in (the fleet's /timeseries), without building a step record: for a caller that
  // needs only these. `tally` must outlive the instance's steps; nullptr stops.
  void TallyTokens(SimTime interval, std::vector<TokenTally>* tally) {
    tally_interval_ = interval;
    tally_ = tally;
  }

  // Lock-step driving, for the ranks of a data-parallel engine (engine/dp_engine.h) whose
  // steps start and end together: BeginLockStep moves the clock to `at` (not before the
  // instance's own), admits the arrivals due by then and plans a step -- the batch's shape,
  // or nothing when the scheduler has nothing to run; FinishLockStep commits that step
  // with the duration the caller sets for every rank. An instance driven this way is
  // never given RunUntil; fast decode is not used.
  std::optional<BatchShape> BeginLockStep(SimTime at);
  void FinishLockStep(const BatchShape& shape, SimTime duration);
  // A rank that ran no step of its own (vLLM's dummy batch) moves its clock to `at`.
  void IdleUntil(SimTime at);
  // The next request on the wire, kNever when none.
  SimTime NextArrival() const;

  // Forgets the KV cache's records of conversations that will send no more turns here:
  // the caller knows every request arriving before `arrived_before` has been handed to
  // its instance, and those ended before it with none of their turns here (on the wire,
  // queued or running) will not come back (KvCacheManager::ForgetEndedRecords). Changes
  // no result; only memory.
  void ForgetEndedConversations(SimTime arrived_before);

  // At a horizon: settles every request handed over and not done -- arrived or not -- as
  // unfinished (in arrival order), so that each appears once in the results.
  void FlushPending();
  bool idle() const { return scheduler_.idle() && pending_.empty(); }
  SimTime now() const { return now_; }
  // When this instance last admitted an arrival or started a step; -1 before either.
  SimTime last_active() const { return last_active_; }
  // When RunUntil next has something to do: the next step's start, or the next arrival
  // when idle; kNever when there is nothing (or nothing that could ever run).
  SimTime NextEventTime() const;
  // Requests handed over and not settled (on the wire, queued or running).
  int64_t outstanding() const { return static_cast<int64_t>(pending_.size() + live_.size()); }
  int64_t num_running() const { return static_cast<int64_t>(scheduler_.running().size()); }
  int64_t num_waiting() const { return static_cast<int64_t>(scheduler_.waiting().size()); }
  // Settled records not yet taken, in the order they settled.
  const std::vector<RequestRecord>& records() const { return settled_; }
  // Moves the settled records out.
  std::vector<RequestRecord> TakeRecords();
  const KvCacheManager& kv_cache() const { return kv_; }
  int64_t steps() const { return steps_; }
  SimTime busy_time() const { return busy_; }

  // The engine's whole state -- pool, queues, requests and their records, counters and a
  // decode run in progress (docs/CHECKPOINT.md); Load into an instance built alike (the
  // same setup), before anything arrives. The step observer is the caller's.
  void Save(CheckpointWriter& w) const;
  void Load(CheckpointReader& r);

 private:
  void AdmitArrivalsUpTo(SimTime t);
  // Before a schedule: admits the arrivals it sees -- under async scheduling right after a
  // step, those up to that step's start; else those up to now.
  void PrepareSchedule();
  // Under async scheduling right after a step (`lagged`), hides from the next schedule
  // the sequence slots and blocks of the requests that step finished: vLLM scheduled it
  // while they still held them. They are freed (the pool's usage shows it), but held back
  // from allocation (KvCacheManager::Reserve) and from max_num_seqs (Scheduler::Hold).
  // `false` lifts that.
  void HideLastFinishes(bool lagged);
  // Whether the next schedule is the lagged one of async scheduling (a step just ended).
  bool Lagged() const { return config_.async_scheduling && step_end_ == now_; }
  // A lagged schedule found nothing: the next one sees everything (vLLM schedules again at
  // the step's end). False when it was not lagged.
  bool Unlag();
  // Frees the blocks of handed-off requests whose KV was sent by `t`.
  void ReleaseSentUpTo(SimTime t);
  // The next arrival or block release (kNever: none).
  SimTime NextWake() const;
  // Moves a finished remote_decode request from the live list to the sending one.
  void HandOff(Request& request, SimTime first_token);
  RequestRecord& RecordOf(const Request& request) {
    return slots_[static_cast<std::size_t>(request.slot)];
  }
  // Moves a request's record to the settled list and frees its slot.
  void Settle(Request& request);
  void RunStep();
  // RunStep's two halves: the scheduler's plan (its shape; nothing when empty), and its
  // commit with `duration`, which moves the clock to the step's end.
  std::optional<BatchShape> PlanStep();
  void FinishStep(const BatchShape& shape, SimTime duration);
  // Advances steps in one move until an event needs the ordinary step (a finish whose KV
  // is handed off, a pool too short for the next step's blocks, an arrival computed or
  // decoded elsewhere) or the window ends or the next arrival is due. The leading running
  // requests that decode are the run's lanes, taken in bulk, doing only the pool work of
  // the steps that have some; the running requests after them -- its tail: a prompt split
  // at block boundaries, an arrival admitted beside the decodes -- and arrivals are
  // scheduled one by one as Schedule would, and join the lanes once they decode. Finishes
  // are settled as the ordinary step would settle them. A decode run outlives a window:
  // the lanes' counts are brought up to date only where the run does pool work and when
  // it ends (EndDecodeRun), so a window that only advances decodes reads the run's lanes,
  // not every request.
  bool FastDecode(SimTime until);
  // A run's steps from `step` (advanced) up to `end`, the first that would start at or after
  // `until`, or the first whose schedule would see `arrival` (AdmissionHorizon), which
  // change nothing but the clock: no pool work, finish, tail or waiting request. Returns
  // the time after the last; it runs at least one.
  SimTime QuietSteps(int64_t& step, int64_t end, SimTime t, SimTime until, SimTime arrival);
  // The latest arrival the schedule of a step starting at `t` after a step that started
  // at `last_start` sees: `last_start` under async scheduling, else `t`.
  SimTime AdmissionHorizon(SimTime last_start, SimTime t) const {
    return config_.async_scheduling ? last_start : t;
  }
  // The queues and the pool as they stand into scheduled_, and from there into a record.
  void NoteScheduled();
  void CopyScheduled(StepRecord& record) const;
  // The record of a run step of `decodes` decodes alone; a step with chunks adds them. Its
  // scheduled state is the last NoteScheduled's.
  StepRecord RunStepRecord(SimTime start, SimTime duration, int64_t decodes, int64_t context_sum,
                           int64_t context_max) const;
  bool StartDecodeRun();
  // Whether a running request decodes next (its prompt computed, one token to compute).
  static bool Decoding(const Request& request);
  // Brings every request of the run to the steps taken and ends it; before anything else
  // reads or changes the running requests.
  void EndDecodeRun();
  // Brings the lane's request to `step` steps of the run.
  void BringTo(std::size_t lane, int64_t step);
  BatchShape ShapeOf(const StepPlan& plan) const;
  // Adds a scheduled chunk to a step's shape, as vLLM's batch holds it.
  static void AddChunk(const ScheduledChunk& chunk, BatchShape& shape);

  KvCacheManager kv_;
  Scheduler scheduler_;
  const StepCostModel& cost_;
  SimTime now_ = 0;  // when the engine is next free
  SimTime last_active_ = -1;
  // The last step's start and end; the end is -1 before any step, and once a lagged
  // schedule was found empty (Unlag).
  SimTime step_start_ = 0;
  SimTime step_end_ = -1;
  // The requests the last step finished, and the blocks their frees returned to the pool
  // (HideLastFinishes).
  int64_t last_finished_ = 0;
  int64_t last_freed_ = 0;
  SimTime last_admitted_ = 0;  // the arrival time of the last request admitted
  std::deque<std::pair<SimTime, std::unique_ptr<Request>>> pending_;
  std::vector<std::unique_ptr<Request>> live_;  // queued or running, in arrival order
  std::vector<RequestRecord> slots_;            // live requests' records, by Request::slot
  std::vector<int64_t> free_slots_;
  std::vector<RequestRecord> settled_;
  // Handed-off requests holding their blocks until their KV is sent, by (sent, id).
  std::map<std::pair<SimTime, int64_t>, std::unique_ptr<Request>> sending_;
  HandOffHook on_hand_off_;
  // Work is queued but nothing can be scheduled until a new arrival (cannot happen with
  // the arrival-time checks; guards a run against waiting forever).
  bool stalled_ = false;
  std::function<void(const StepRecord&)> on_step_;
  SimTime tally_interval_ = 1;
  std::vector<TokenTally>* tally_ = nullptr;
  void Tally(SimTime end, int64_t prompt_tokens, int64_t generated_tokens) {
    if (tally_ != nullptr)
      AddTokens(*tally_, end / tally_interval_, prompt_tokens, generated_tokens);
  }
  // A step's prompt tokens: its chunks' tokens, draft tokens not counted.
  static int64_t PromptTokensOf(const BatchShape& shape) {
    return shape.prefill_tokens() - shape.spec_tokens();
  }
  // A step record's batch fields, as the step's shape gives them.
  static void DescribeBatch(const BatchShape& shape, StepRecord& step) {
    step.prefill_tokens = PromptTokensOf(shape);
    step.prefill_chunks = shape.gdn_prefills();
    step.decodes = shape.num_decodes() + shape.num_spec_decodes();
    step.decode_context_mean = shape.mean_decode_context();
    step.decode_context_max = shape.max_decode_context();
  }
  const StepPlan* planned_ = nullptr;  // between PlanStep and FinishStep
  // The queues and the pool once the step in progress was scheduled (StepRecord's
  // scheduled_* fields): scratch between its planning and its record.
  struct Scheduled {
    int64_t running = 0, waiting = 0;
    double kv_usage = 0;
  } scheduled_;
  SchedulerConfig config_;
  int64_t steps_ = 0;
  SimTime busy_ = 0;
  bool fast_decode_ = true;
  bool record_scheduled_ = false;
  int64_t fast_decode_steps_ = 0;
  int64_t fast_decode_pool_steps_ = 0;
  // The decode run in progress (FastDecode): one lane per running request, in running
  // order, with steps counted from the run's first.
  struct DecodeLane {
    Request* request = nullptr;
    // The next step with pool work; for a lane with anonymous blocks, its first boundary
    // not yet listed in the request (the later ones come every block).
    int64_t next_work = 0;
    int64_t synced = 0;     // the step the request's counts stand at
    int64_t anonymous = 0;  // blocks per boundary when they are only counted, else 0
    // Kept so that summing the lanes reads no request (they move with `synced`): the
    // context as it stood at the run's first step, the run step that makes the request's
    // last token, and whether its KV is handed off then.
    int64_t context = 0;
    int64_t end = 0;
    bool hands_off = false;
  };
  std::vector<DecodeLane> lanes_;
  // What a run sums over its lanes, as they stood at its first step.
  struct LaneSums {
    int64_t end = 0;        // the first step that would finish a request
    int64_t hand_offs = 0;  // lanes whose request hands its KV off when it ends
    int64_t context_sum = 0;
    int64_t context_min = 0;  // the shortest and longest context
    int64_t context_max = 0;
    // The sums over no lane.
    static LaneSums None() { return {INT64_MAX, 0, 0, INT64_MAX, INT64_MIN}; }
    void Add(const DecodeLane& lane) {
      end = std::min(end, lane.end);
      hand_offs += lane.hands_off ? 1 : 0;
      context_sum += lane.context;
      context_min = std::min(context_min, lane.context);
      context_max = std::max(context_max, lane.context);
    }
  };
  LaneSums lane_sums_;
  // A lane for `request`, its counts standing at run step `synced`.
  DecodeLane MakeLane(Request& request, int64_t next_work, int64_t synced, int64_t anonymous) const;
  // The run's end and its contexts at its first step, from the lanes.
  void SumUpLanes();
  // The first step from `from` where lanes with anonymous blocks reach a boundary.
  int64_t NextAnonymousWork(int64_t from) const;
  // Whether the lane (with anonymous blocks) reaches a boundary at `step`.
  bool AnonymousDue(const DecodeLane& lane, int64_t step) const;
  // Counts the lane's work: its anonymous blocks by phase, or its next step with work.
  void AddLaneWork(const DecodeLane& lane);
  // Takes a finishing lane's anonymous blocks out of its phase's count: the counts stay
  // those SumUpLaneWork would give for the lanes left.
  void RemoveLaneWork(const DecodeLane& lane);
  // Sums up every lane's work, and the run's next step with work from `from` on.
  void SumUpLaneWork(int64_t from);
  // Whether a request that the run's `step` finishes hands its KV off.
  bool FinishingLanesHandOff(int64_t step) const;
  // Settles the lane's request, whose last token the run's `step` (ending at `end`) made,
  // and frees its blocks; the lane is left empty (request nullptr) for the caller to drop.
  void FinishLane(std::size_t lane, int64_t step, SimTime end);
  // Completes a planned step's chunks (`start` to `end`): records, finishes, hand-offs --
  // FinishStep's, and a decode run's for its tail; the tokens they generated.
  int64_t SettleChunks(const StepPlan& plan, SimTime start, SimTime end);
  // Adds a lane for a request that decodes from the run's next step after `step`.
  void AddLane(Request& request, int64_t step);
  bool decode_run_ = false;
  int64_t decode_run_steps_ = 0;  // steps taken
  int64_t decode_next_work_ = 0;  // the first step with pool work
  double decode_usage_ = 0;       // the pool's usage after the last step
  // Lanes with anonymous blocks: the blocks they take at a step, by the step's phase
  // (modulo the block size), and the phases that have any (a few of a block's hundreds of
  // tokens in a hybrid); the other lanes' first step with work.
  std::vector<int64_t> anonymous_by_phase_;
  std::vector<int64_t> anonymous_phases_;
  int64_t named_next_work_ = INT64_MAX;
  // At a step where lanes allocate for real: the lanes with work at the step (those that
  // allocate, and those whose anonymous blocks are due), in running order, and the first
  // step with work of the other named lanes -- so that the allocation and the commits
  // visit only them (a scratch list, kept for its capacity).
  std::vector<std::size_t> due_lanes_;
  int64_t other_named_next_work_ = INT64_MAX;
  StepCostModel::DecodeRun decode_cost_;  // the run's step costs, at its batch size
};

}  // namespace fleetsim
