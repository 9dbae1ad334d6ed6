// The instances one rank simulates: their engines, the event queue that says which have
// something to do before a time, delivering routed requests to them, advancing them to a
// window's end, and collecting what their steps left (request rows into the ledger,
// tokens and state samples into /timeseries, /steps rows, per-instance totals for
// /instances).
//
// Instances share only read-only cost tables (whose out-of-grid counter is atomic, as the
// ranks that are threads of one process share them), so they advance independently;
// everything they leave is collected afterwards, in instance order.
//
//   InstanceShard shard(fleet, fleet.Partition(size), rank, options);
//   shard.Deliver(ParseRoutedRequests(received));    // any order: taken by (time, id)
//   shard.Advance(window, clock, ledger);              // pauses at /timeseries points
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <queue>
#include <vector>

#include "fleet/fleet_engine.h"
#include "fleet/fleet_metrics.h"
#include "fleet/fleet_setup.h"
#include "fleet/request_ledger.h"
#include "fleet/routed_request.h"
#include "fleet/router.h"
#include "fleet/timeseries.h"
#include "fleet/window_clock.h"
#include "output/run_tables.h"

namespace fleetsim {

struct InstanceShardOptions {
  bool trace_steps = false;  // keep one /steps row per engine step
};

class InstanceShard {
 public:
  // Builds the instances `owner_of` gives to `rank` (owner_of: the rank of every instance).
  InstanceShard(const FleetSetup& fleet, std::vector<int32_t> owner_of, int rank,
                InstanceShardOptions options);
  ~InstanceShard();
  InstanceShard(const InstanceShard&) = delete;
  InstanceShard& operator=(const InstanceShard&) = delete;

  // The rank of every instance, by id.
  const std::vector<int32_t>& owner_of() const { return owner_of_; }
  Timeseries& timeseries() { return timeseries_; }

  // Hands routed requests (every one for an instance of this rank) to their engines, in
  // (instance arrival, id) order, whatever order they came in: from gateways, and handed
  // over by prefill instances (RoutedRequest::prefill set).
  void Deliver(std::vector<RoutedRequest> arrivals);
  // Every request arriving before `arrived_before` has been delivered: each instance of
  // one engine forgets its records of conversations that will send it no more turns
  // (Instance::ForgetEndedConversations). Memory only; no result changes.
  void ForgetEndedConversations(SimTime arrived_before);
  // The requests this rank's prefill instances handed over since the last call, each
  // addressed to its decode instance (RoutedRequest::instance) at the end of its KV
  // transfer (docs/DISAGGREGATION.md), by (arrival, id).
  std::vector<RoutedRequest> TakeHandOffs();
  // The earliest next event of any instance here (kNever when none has one).
  SimTime NextEvent();
  // Advances every instance through [start, stop), pausing at each /timeseries
  // sample point inside it (rounded up to a whole step) to record the state there.
  void Advance(SimTime start, SimTime stop, const WindowClock& clock, RequestLedger& ledger);
  // Samples /timeseries at every interval start up to `now`.
  void SampleUpTo(SimTime now);
  // The load (outstanding requests, KV blocks held) of each local instance whose load
  // differs from the last call's (from zero, at the first), by instance id. Only the
  // instances delivered to or advanced since are looked at: the others cannot differ.
  std::vector<LoadChange> TakeLoadChanges();
  // The latest time any instance here did anything (-1: none did).
  SimTime LastActive() const;
  // At the end: every request still held ends unfinished, and the totals are final.
  void Finish(RequestLedger& ledger);

  // Engine steps taken so far by the instances here (as of their last collection: asked
  // at every window, so kept as a running sum rather than a loop over the instances).
  int64_t steps() const { return steps_; }
  // This rank's /instances rows, by instance id.
  std::vector<output::InstanceRow> InstanceRows() const;
  // The /steps rows kept (trace_steps) of each instance here, with its id.
  struct StepRows {
    int32_t instance;
    const std::vector<output::StepRow>* rows;
  };
  std::vector<StepRows> Steps() const;

  // Checkpoints (docs/CHECKPOINT.md), by instance id: the ids held here; instance `id`'s
  // engine and what the shard keeps of it (its last reported load, /instances totals,
  // /steps rows) saved, or loaded into the fresh instance held here; Restored() once every
  // instance here is loaded (the event queue, and every instance looked at in the next
  // load snapshot -- those that did not change since the last report send nothing).
  std::vector<int32_t> ids() const;
  bool Holds(int32_t id) const {
    return id >= 0 && static_cast<std::size_t>(id) < local_of_.size() &&
           local_of_[static_cast<std::size_t>(id)] >= 0;
  }
  void SaveInstance(int32_t id, CheckpointWriter& w) const;
  void LoadInstance(int32_t id, CheckpointReader& r);
  void Restored();

 private:
  struct Local;
  // A pass over `locals`, in the order given: owned(instance), then then(local).
  template <typename Owned, typename Then>
  void Pass(const std::vector<int32_t>& locals, const Owned& owned, const Then& then);
  // Its arrivals (chained in `arrivals`) handed to its engine (Deliver).
  void ArriveAll(Local& instance, std::vector<RoutedRequest>& arrivals);
  // After its engine moved: its settled requests as rows into the ledger, its token
  // tallies into /timeseries.
  void Settle(Local& instance, RequestLedger& ledger);
  // Its next event and load, which the event queue and the load changes read instead of
  // the engine's state, and its steps.
  void Snapshot(Local& instance);
  // Adds the instance's new steps to the shard's count.
  void CountSteps(int32_t local);
  // Puts the instance in the event queue at its snapshot's next event.
  void Requeue(int32_t local);
  void Touch(int32_t local);
  void AdvanceTo(SimTime until, RequestLedger& ledger);
  void Sample(const Timeseries::Sampler& sample) const;
  // On the prefill instance, when a request's first token is out: its transfer to
  // the decode instance the gateway chose, queued as a hand-off; returns when the KV is sent.
  SimTime HandOff(Local& instance, const Request& request, const RequestRecord& record);

  const FleetSetup& fleet_;
  std::vector<int32_t> owner_of_;
  InstanceShardOptions options_;
  NetworkDelays delays_;
  std::vector<std::unique_ptr<Local>> locals_;
  std::vector<int32_t> local_of_;  // by instance id; -1 when another rank has it
  using Entry = std::pair<SimTime, int32_t>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> queue_;
  std::vector<int32_t> active_;
  std::vector<int32_t> delivered_;     // locals with arrivals in Deliver
  std::vector<int32_t> next_arrival_;  // Deliver's arrivals, chained per instance
  // What the shard keeps of each instance, by local index, apart from the instance's own
  // state: the event queue's key and the load last reported.
  struct Queued {
    SimTime key = kNever;   // its next event time as the event queue knows it
    InstanceLoad reported;  // its load in the last TakeLoadChanges
    int64_t steps_seen = 0;
    bool active = false;
    bool touched = false;  // in touched_
  };
  std::vector<Queued> queued_;
  int64_t steps_ = 0;             // the sum of every local's steps_seen
  std::vector<int32_t> touched_;  // delivered to or advanced since the last TakeLoadChanges
  Timeseries timeseries_;
};

// The gateway -> instance and instance -> client latencies of a cluster, in whole
// nanoseconds (the first at least one: it is the fleet's lookahead).
NetworkDelays DelaysOf(const ClusterConfig& cluster);

}  // namespace fleetsim
