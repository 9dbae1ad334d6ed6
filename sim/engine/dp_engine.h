// Data parallelism with expert parallelism for MoE models, as vLLM 0.19 runs it
// (`data_parallel_size` > 1, `enable_expert_parallel`): one engine core per DP rank, each
// with its own scheduler and KV cache, attention on its own batch; the MoE layers run over
// all DP x TP GPUs with the experts sharded among them, so the ranks step in lock-step.
//
//   DpEngine engine(std::move(ranks), cost, expert_group, hidden, capture_tokens);
//   engine.Arrive(std::move(request), arrival);   // the rank is picked when it arrives
//   engine.RunUntil(kNever);
//   std::vector<int32_t> ranks;
//   for (const RequestRecord& r : engine.TakeRecords(&ranks)) ...   // and who served it
//
// It offers what a fleet's instance shard asks of an Instance (fleet/fleet_engine.h): the
// fleet routes to the engine as to one instance whose load is its ranks' summed.
//
// The rules, from vLLM's source (docs/COLLECTIVES.md, "Data parallelism with experts"):
// - lock-step (v1/engine/core.py DPEngineCoreProc.run_busy_loop): while any rank has
//   unfinished requests every rank runs a step; a rank with nothing scheduled runs a dummy
//   batch (execute_dummy_batch: _dummy_run(1), a 1-token forward without attention
//   metadata or sampling) so that its MoE layers
//   join the collectives. Whether any rank still has work is all-reduced only every 32nd
//   step of a wave (_has_global_unfinished_reqs), so a wave whose work ends between two
//   checks runs dummy steps on every rank up to the next; then it ends and all wait for the
//   next request.
// - per step (v1/worker/gpu_model_runner.py _determine_batch_execution_and_padding,
//   v1/worker/dp_utils.py coordinate_batch_across_dp): each rank pads its batch to its
//   CUDA-graph capture size (config/vllm.py's list: 1, 2, 4, every 8 below 256, every 16
//   up to max_cudagraph_capture_size = min(2 x max_num_seqs, 512, max_num_batched_tokens));
//   the ranks all-reduce their counts; when every rank's batch fits a graph all run the
//   largest (dense kernels and the MoE input; attention reads each rank's own batch), else
//   each keeps its own padded count.
// - MoE with EP (all2all_backend allgather_reducescatter, distributed/device_communicators/
//   all2all.py AgRsAll2AllManager): dispatch all-gathers every rank's tokens with their
//   router logits (dispatch_router_logits), each rank
//   runs its experts / (DP x TP) experts on all of them, combine reduce-scatters; the
//   collective makes every layer wait for the slowest rank.
// - a step's time: the slowest rank's step without its MoE blocks + the MoE blocks of one
//   expert shard on the gathered tokens (its own experts' work from the table, and the row
//   stages it runs for the tokens routed elsewhere, perf/expert_mask_cost.h) + the
//   dispatch/combine of every MoE layer.
// - the front end's choice of rank (v1/engine/core_client.py DPLBAsyncMPClient
//   .get_core_engine_for_request): the lowest waiting x 4 + running over counts the DP
//   coordinator publishes at most every 100 ms (v1/engine/coordinator.py,
//   stats_update_interval_ms), scanning from rank 0 (eng_start_index of the only client)
//   and keeping the first lowest; the chosen rank's waiting count is raised by one until the
//   next publication.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "core/checkpoint_io.h"
#include "core/sim_time.h"
#include "engine/instance.h"
#include "perf/collective.h"
#include "perf/expert_mask_cost.h"
#include "perf/step_cost.h"

namespace fleetsim {

// A rank's queue as the DP coordinator reports it.
struct DpLoad {
  int64_t waiting = 0;
  int64_t running = 0;
};

// The front end's choice of DP rank (DPLBAsyncMPClient).
class DpRankChooser {
 public:
  // vLLM's default stats_update_interval_ms (coordinator.py).
  static constexpr SimTime kPublishInterval = 100'000'000;

  explicit DpRankChooser(int ranks) : counts_(static_cast<std::size_t>(ranks)) {}
  // Whether a publication is due at `t` (the first, or kPublishInterval after the last).
  bool Due(SimTime t) const { return !published_ || t >= last_publish_ + kPublishInterval; }
  void Publish(SimTime t, std::vector<DpLoad> counts);
  // The rank with the lowest waiting x 4 + running, the first of equals; counts it waiting.
  int Choose();
  const std::vector<DpLoad>& counts() const { return counts_; }

  // Its published counts and when (docs/CHECKPOINT.md); Load into one of as many ranks.
  void Save(CheckpointWriter& w) const;
  void Load(CheckpointReader& r);

 private:
  std::vector<DpLoad> counts_;
  bool published_ = false;
  SimTime last_publish_ = 0;
};

// What one lock-step costs.
struct DpStepTiming {
  SimTime slowest_rank_ns = 0;  // the longest rank step without its MoE blocks
  int64_t gathered_tokens = 0;  // what each MoE dispatch all-gathers
  SimTime moe_ns = 0;           // one expert shard's MoE blocks on them, all layers
  SimTime masked_ns = 0;        // of which the rows of other ranks' experts
  SimTime exchange_ns = 0;      // dispatch + combine, all MoE layers
  SimTime total_ns = 0;
  bool rooted_exchange = false;  // unequal counts: rooted broadcasts and reduces
};

// One lock-step, for /steps and validation: the ranks' states summed.
struct DpStepRecord {
  SimTime start = 0;
  DpStepTiming timing;
  int busy_ranks = 0;
  int64_t running = 0;
  int64_t waiting = 0;
  double kv_usage = 0;  // the ranks' mean pool usage after the step, as a DP run logs it
  // The same once every rank scheduled the step (StepRecord's scheduled_* fields).
  int64_t scheduled_running = 0;
  int64_t scheduled_waiting = 0;
  double scheduled_kv_usage = 0;
};

class DpEngine {
 public:
  // `ranks`: one instance per DP rank, sharing `cost` (the per-rank step-cost model);
  // `dp_group`: the collective model of the DP group that the dispatch gathers over;
  // `hidden`: the model's hidden size; `capture_tokens`: max_cudagraph_capture_size (0
  // when CUDA graphs are off: no padding).
  DpEngine(std::vector<std::unique_ptr<Instance>> ranks, const StepCostModel& cost,
           CollectiveModel dp_group, int64_t hidden, int64_t capture_tokens,
           ExpertMaskCost mask = {});

  // Hands the request over at `arrival` (taken in (arrival, id) order whatever order the
  // calls come in, not before a request already given a rank): RunUntil gives it to a
  // rank as vLLM's front end does when the engine reaches `arrival`.
  void Arrive(std::unique_ptr<Request> request, SimTime arrival);
  // Runs every lock-step that starts before `until`; one in progress may end after it.
  void RunUntil(SimTime until);
  void OnStep(std::function<void(const DpStepRecord&)> observer) { on_step_ = std::move(observer); }
  // Whether the records, the lock-steps' and the ranks', carry the queues and the pool as
  // each step was scheduled (Instance::RecordScheduledState); off by default.
  void RecordScheduledState(bool on);
  // Called for every rank, in rank order, at every lock-step's end: the rank's own step,
  // or its dummy batch (a record with no tokens, the lock-step's start and duration, the
  // rank's queues).
  using RankStepObserver = std::function<void(int rank, const StepRecord&)>;
  void OnRankStep(RankStepObserver observer);
  // At a horizon: requests not yet given a rank are given one (by the counts last
  // published), and every rank settles what it holds as unfinished.
  void FlushPending();

  // vLLM's wave-end check interval (core.py _has_global_unfinished_reqs).
  static constexpr int64_t kWaveCheckSteps = 32;

  // The cost of one lock-step of the ranks' planned batches (nothing: a dummy batch).
  DpStepTiming Time(const std::vector<std::optional<BatchShape>>& shapes) const;

  int size() const { return static_cast<int>(ranks_.size()); }
  Instance& rank(int r) { return *ranks_[static_cast<std::size_t>(r)]; }
  const Instance& rank(int r) const { return *ranks_[static_cast<std::size_t>(r)]; }
  SimTime now() const { return now_; }
  // Lock-steps run, and their summed durations.
  int64_t steps() const { return steps_; }
  SimTime busy_time() const { return busy_; }
  // When RunUntil next has something to do: the next lock-step's start, or the next
  // arrival between waves; kNever when nothing.
  SimTime NextEventTime() const;
  // The last lock-step's start or arrival taken (-1 before either).
  SimTime last_active() const { return last_active_; }
  // Summed over the ranks (outstanding: also the requests not yet given a rank).
  int64_t outstanding() const;
  int64_t num_running() const;
  int64_t num_waiting() const;
  int64_t kv_used_blocks() const;
  int64_t kv_usable_blocks() const;
  // Settled records of every rank, rank by rank; `ranks`, when given, gets the DP rank of
  // each.
  std::vector<RequestRecord> TakeRecords(std::vector<int32_t>* ranks = nullptr);

  // Its state at a window boundary (docs/CHECKPOINT.md): every rank's instance (with the
  // records not yet taken, whose DP rank is the rank holding them), the front end's
  // published counts, the requests not yet given a rank, the clock and the wave. Load
  // into an engine built alike (the same ranks, cost model and group), before it runs.
  // The step observers are the caller's.
  void Save(CheckpointWriter& w) const;
  void Load(CheckpointReader& r);

 private:
  std::vector<DpLoad> Loads() const;
  // Gives every request that arrived by `now_` a rank, in arrival order, with the counts
  // published by its arrival.
  void AssignArrivals();
  void GiveToRank(SimTime arrival, std::unique_ptr<Request> request);

  std::vector<std::unique_ptr<Instance>> ranks_;
  const StepCostModel& cost_;
  CollectiveModel dp_group_;
  int64_t hidden_;
  int64_t capture_tokens_;
  ExpertMaskCost mask_;
  DpRankChooser chooser_;
  // Requests handed over and not yet given a rank, by (arrival, id).
  std::deque<std::pair<SimTime, std::unique_ptr<Request>>> arrivals_;
  SimTime last_assigned_ = 0;  // the arrival of the last request given a rank
  SimTime now_ = 0;
  SimTime last_active_ = -1;
  SimTime busy_ = 0;
  int64_t steps_ = 0;
  int64_t wave_steps_ = 0;  // lock-steps of the current wave; 0 between waves
  // The ranks' loads before the last lock-step, which a request arriving while it runs
  // sees (the engines publish after a step ends).
  std::vector<DpLoad> loads_before_step_;
  std::function<void(const DpStepRecord&)> on_step_;
  bool record_scheduled_ = false;
  RankStepObserver on_rank_step_;
};

}  // namespace fleetsim
