// One fleet instance as an instance shard drives it: a single engine (engine/instance.h),
// or, for a group with `dp` > 1, a data-parallel engine of `dp` lock-stepped ranks
// (engine/dp_engine.h) that the routers see as one instance whose load is its ranks'
// summed; the engine gives each request to a rank as vLLM's front end does.
//
//   std::unique_ptr<FleetEngine> engine = MakeFleetEngine(setup, group);
//   engine->Arrive(std::move(request), arrival);
//   engine->RunUntil(window_end);
//   std::vector<int32_t> ranks;
//   for (RequestRecord& r : engine->TakeRecords(ranks)) ...   // ranks empty: no DP
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "cluster/cluster_config.h"
#include "core/checkpoint_io.h"
#include "core/sim_time.h"
#include "engine/engine_setup.h"
#include "engine/instance.h"

namespace fleetsim {

class FleetEngine {
 public:
  virtual ~FleetEngine() = default;

  virtual void Arrive(std::unique_ptr<Request> request, SimTime arrival) = 0;
  // Runs every step that starts before `until`; a step in progress may end after it.
  virtual void RunUntil(SimTime until) = 0;
  // The next step's start, or the next arrival when idle; kNever when nothing.
  virtual SimTime NextEventTime() const = 0;
  // At a horizon: every request held settles, unfinished ones as unfinished.
  virtual void FlushPending() = 0;
  // The records settled since the last call. `dp_ranks` gets the DP rank that served each,
  // or is left empty by a single engine.
  virtual std::vector<RequestRecord> TakeRecords(std::vector<int32_t>& dp_ranks) = 0;
  // Called at every step's end: a single engine's steps with rank -1; a data-parallel
  // engine's lock-steps once per rank, in rank order (an idle rank's dummy batch as a
  // record without tokens).
  using StepObserver = std::function<void(int32_t dp_rank, const StepRecord&)>;
  virtual void OnStep(StepObserver observer) = 0;

  // Engine steps (lock-steps) and their summed durations.
  virtual int64_t steps() const = 0;
  virtual SimTime busy_time() const = 0;
  // When it last took an arrival or started a step; -1 before either.
  virtual SimTime last_active() const = 0;
  // Summed over a data-parallel engine's ranks.
  virtual int64_t outstanding() const = 0;
  virtual int64_t num_running() const = 0;
  virtual int64_t num_waiting() const = 0;
  virtual int64_t kv_used_blocks() const = 0;
  virtual int64_t kv_usable_blocks() const = 0;

  // Its state at a window boundary, for a checkpoint (docs/CHECKPOINT.md); Load into an
  // engine made alike for the same group, before it runs.
  virtual void Save(CheckpointWriter& w) const = 0;
  virtual void Load(CheckpointReader& r) = 0;

  // The single engine, for what only it does (prefill hand-offs); nullptr
  // for a data-parallel one.
  virtual Instance* single() { return nullptr; }
  const Instance* single() const { return const_cast<FleetEngine*>(this)->single(); }
};

// vLLM's max_cudagraph_capture_size for a fleet group: 0 (no CUDA graphs, no padding)
// when its bundle was profiled eager, else the default of its max_num_seqs.
int64_t CudagraphCaptureTokensOf(const EngineSetup& setup);

// The engine of one instance of `group` (whose setup is `setup`; its KV budget already
// the per-rank one of a DP group, fleet/fleet_setup.cc).
std::unique_ptr<FleetEngine> MakeFleetEngine(const EngineSetup& setup,
                                             const InstanceGroupConfig& group);

}  // namespace fleetsim
