// An Instance saved to and restored from a checkpoint: every field that a restarted
// run needs to go on byte-identically.

#include <tuple>
#include <unordered_map>
#include <utility>

#include "core/check.h"
#include "engine/instance.h"

namespace fleetsim {

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
