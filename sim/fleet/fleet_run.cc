#include "fleet/fleet_run.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <exception>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <queue>
#include <utility>

#include <tbb/global_control.h>
#include <tbb/parallel_for.h>

#include "comm/collectives.h"
#include "core/format.h"
#include "core/hash64.h"
#include "core/input_error.h"
#include "fleet/fleet_metrics.h"
#include "fleet/progress.h"
#include "fleet/routed_request.h"
#include "fleet/router.h"
#include "fleet/row_exchange.h"
#include "fleet/timeseries.h"

namespace fleetsim {
namespace {

// One instance this rank simulates, with what its steps leave for the main thread.
struct LocalInstance {
  int32_t id = 0;
  int32_t group = 0;
  std::unique_ptr<Instance> engine;
  SimTime key = kNever;  // its next event time as the event queue knows it
  bool active = false;
  int64_t steps_seen = 0;
  std::vector<output::StepRow> steps;
  std::vector<TokenTally> tally;  // written by the instance's thread, drained after the window
  output::InstanceRow row{};
};

struct LocalGateway {
  int32_t id = 0;
  Router router;
};

// The workload as the reader rank (rank 0) sees it: the whole stream, one request at a
// time; a request's position is its id. The other ranks have no source: the reader sends
// each window's arrivals to their gateways' ranks.
class WorkloadReader {
 public:
  WorkloadReader(WorkloadSource* source, int gateways)
      : source_(source), gateways_(gateways), exhausted_(source == nullptr) {}

  // The next request, without taking it.
  const RoutedRequest* Peek() {
    if (!peeked_ && !exhausted_) {
      std::optional<WorkloadRequest> r = source_->Next();
      if (!r) {
        exhausted_ = true;
        return nullptr;
      }
      RoutedRequest routed;
      routed.id = read_++;
      routed.gateway = GatewayOf(routed.id, gateways_);
      routed.request = std::move(*r);
      peeked_ = std::move(routed);
    }
    return peeked_ ? &*peeked_ : nullptr;
  }
  RoutedRequest Take() {
    RoutedRequest r = std::move(*peeked_);
    peeked_.reset();
    return r;
  }
  // Requests read so far; the workload's size once exhausted (0 off the reader rank).
  int64_t read() const { return read_; }
  bool exhausted() const { return exhausted_ && !peeked_; }
  // After a read error: nothing more comes from the stream.
  void Abandon() {
    exhausted_ = true;
    peeked_.reset();
  }
  // What the source promises at most, for the progress line (-1: unknown).
  int64_t expected() const {
    if (exhausted()) return read_;
    return source_ ? source_->expected_requests().value_or(-1) : -1;
  }

 private:
  WorkloadSource* source_;
  int gateways_;
  int64_t read_ = 0;
  bool exhausted_;
  std::optional<RoutedRequest> peeked_;
};

// A request routed in a window reaches its instance no earlier than the window's start
// plus the latency; anything earlier would reach an instance that may be past it.
void RequireOutsideLookahead(SimTime arrival, SimTime earliest) {
  if (arrival < earliest) {
    std::fprintf(stderr,
                 "fleetsim: internal error: a request sent inside the lookahead (arrives at %lld "
                 "ns, may not arrive before %lld ns)\n",
                 static_cast<long long>(arrival), static_cast<long long>(earliest));
    std::abort();
  }
}

// The longest window of simulated time, whatever the staleness.
constexpr SimTime kMaxWindow = 1'000'000'000;

bool UsesLoad(RoutingPolicy policy) {
  return policy != RoutingPolicy::kRoundRobin && policy != RoutingPolicy::kRandom;
}

class FleetRun {
 public:
  FleetRun(const FleetSetup& fleet, WorkloadSource* source, const FleetRunOptions& options,
           MPI_Comm comm)
      : fleet_(fleet),
        options_(options),
        comm_(comm),
        rank_(comm::RankOf(comm)),
        size_(comm::SizeOf(comm)),
        workload_(source, fleet.cluster.gateways.count),
        timeseries_(fleet.cluster.groups.size(),
                    std::max<SimTime>(1, SecondsToSimTime(fleet.cluster.timeseries_interval_s))),
        fleet_summary_("fleet"),
        progress_(options.progress && rank_ == 0) {
    const ClusterConfig& cluster = fleet.cluster;
    delays_.gateway_to_instance =
        std::max<SimTime>(1, SecondsToSimTime(cluster.latency.gateway_to_instance_s));
    delays_.instance_to_client = SecondsToSimTime(cluster.latency.instance_to_client_s);
    step_ = delays_.gateway_to_instance;
    max_window_ = std::max<SimTime>(1, kMaxWindow / step_) * step_;
    epoch_ = step_ * std::max<int64_t>(1, static_cast<int64_t>(std::ceil(
                                              cluster.gateways.staleness_s / ToSeconds(step_))));
    for (const InstanceGroupConfig& g : cluster.groups)
      summaries_.emplace_back(g.name);
    BuildInstances();
    BuildGateways();
  }

  FleetRunStats Run(output::Hdf5File& file) {
    SimTime window_end = 0;
    outgoing_.assign(static_cast<std::size_t>(size_), {});
    while (true) {
      // First meeting: the next event anywhere (empty stretches are skipped) and the
      // counters for the progress line.
      const std::array<int64_t, 6> mine = {NextLocalEvent(), settled_,      events_,
                                           input_errors_,    other_errors_, Interrupted()};
      const std::array<int64_t, 6> agreed = Agree(mine);
      progress_.Update(window_end, agreed[1], workload_.expected(), agreed[2]);
      const SimTime next = agreed[0];
      if (next == kNever || next >= options_.horizon) break;
      // The window runs to the end of the load-snapshot epoch it starts in, or for at most
      // kMaxWindow: a window's arrivals are all in flight at once, so a long staleness
      // must not hold a long stretch of the workload in memory.
      const SimTime start = std::max(window_end, next / step_ * step_);
      window_end = std::min((start / epoch_ + 1) * epoch_, start + max_window_);
      const SimTime stop = std::min(window_end, options_.horizon);
      RequireTimeseriesRoom(stop);
      timeseries_.SampleUpTo(start, [this](const Timeseries::Sampler& s) { Sample(s); });
      if (UsesLoad(fleet_.cluster.gateways.router.policy) && start / epoch_ != snapshot_epoch_) {
        snapshot_epoch_ = start / epoch_;
        RefreshLoadViews();
      }
      // Everything the gateways receive in the window is routed now, from the snapshot
      // just taken, and reaches its instance's rank before any instance moves.
      ShipArrivals(stop);
      Guarded([&] { Route(start); });
      Meet();
      Guarded([&] { Advance(start, stop); });
      ++windows_;
    }
    progress_.Done();
    const SimTime end = LastStepEnd(window_end);
    timeseries_.ForgetSamplesAfter(end);
    timeseries_.SampleUpTo(end, [this](const Timeseries::Sampler& s) { Sample(s); });
    Finish();
    return Write(file);
  }

 private:
  void BuildInstances() {
    owner_of_ = fleet_.Partition(size_);
    std::vector<int32_t> mine;
    for (std::size_t i = 0; i < owner_of_.size(); ++i) {
      if (owner_of_[i] == rank_) mine.push_back(static_cast<int32_t>(i));
    }
    local_of_.assign(fleet_.instances.size(), -1);
    for (int32_t id : mine) {
      const FleetInstanceInfo& info = fleet_.instances[static_cast<std::size_t>(id)];
      const EngineSetup& setup = fleet_.groups[static_cast<std::size_t>(info.group)];
      const InstanceGroupConfig& group =
          fleet_.cluster.groups[static_cast<std::size_t>(info.group)];
      auto local = std::make_unique<LocalInstance>();
      local->id = id;
      local->group = info.group;
      local->engine = setup.MakeInstance();
      output::InstanceRow& row = local->row;
      row.id = id;
      row.tp = setup.engine.tp;
      output::CopyName(row.group, group.name);
      output::CopyName(row.hardware, group.hardware);
      output::CopyName(row.model, setup.card.name);
      output::CopyName(row.pool,
                       fleet_.cluster.pools[static_cast<std::size_t>(info.placement.pool)].name);
      row.node = info.placement.node;
      row.first_gpu = info.placement.first_gpu;
      row.capacity_tokens_per_s = info.capacity;
      row.block_size = setup.layout.block_size;
      row.pool_blocks = setup.num_blocks;
      LocalInstance* self = local.get();
      const SimTime interval = timeseries_.interval();
      const bool trace = options_.trace_steps;
      local->engine->OnStep([self, interval, trace](const StepRecord& s) {
        AddTokens(self->tally, (s.start + s.duration) / interval, s.prefill_tokens,
                  s.generated_tokens);
        if (!trace) return;
        self->steps.push_back({self->id, 0, s.start, s.duration, s.prefill_tokens, s.prefill_chunks,
                               s.decodes, s.generated_tokens, s.preemptions, s.cache_hit_tokens,
                               s.running, s.waiting, s.kv_usage});
      });
      local_of_[static_cast<std::size_t>(id)] = static_cast<int32_t>(locals_.size());
      locals_.push_back(std::move(local));
    }
  }

  void BuildGateways() {
    const GatewaysConfig& config = fleet_.cluster.gateways;
    std::vector<RouteTarget> targets;
    for (const FleetInstanceInfo& info : fleet_.instances) {
      const EngineSetup& setup = fleet_.groups[static_cast<std::size_t>(info.group)];
      targets.push_back({info.id, info.capacity, setup.num_blocks,
                         static_cast<int32_t>(setup.layout.block_size)});
    }
    for (int32_t g = rank_; g < config.count; g += size_) {
      const uint64_t stream =
          Mix64(options_.seed ^ Mix64(uint64_t{0x6761746577617900} + static_cast<uint64_t>(g)));
      gateways_.push_back({g, Router(config.router, targets, stream)});
    }
    gateway_index_.assign(static_cast<std::size_t>(config.count), -1);
    for (std::size_t i = 0; i < gateways_.size(); ++i)
      gateway_index_[static_cast<std::size_t>(gateways_[i].id)] = static_cast<int32_t>(i);
  }

  // Runs a rank-local part of the window (reading the workload, routing, delivering,
  // advancing); an error is held for the next meeting, where every rank learns of it and
  // stops together -- none is left waiting in a collective.
  template <typename Part>
  void Guarded(Part part) {
    if (error_) return;  // this rank already failed: wait for the meeting
    try {
      part();
    } catch (const InputError&) {
      error_ = std::current_exception();
      ++input_errors_;
    } catch (const std::exception&) {
      error_ = std::current_exception();
      ++other_errors_;
    }
  }

  // The workload's next request; none once reading failed (here or in an earlier part:
  // the run stops at the next meeting either way).
  const RoutedRequest* PeekArrival() {
    const RoutedRequest* next = nullptr;
    Guarded([&] { next = workload_.Peek(); });
    if (error_) workload_.Abandon();
    return error_ ? nullptr : next;
  }

  // Collective: the lowest rank holding an error prints it -- now, while every rank is
  // still alive, so that mpirun cannot cut it off -- and every rank exits with its code.
  [[noreturn]] void FailTogether(bool input_error) {
    progress_.Done();
    const int code = input_error ? kExitInputError : 1;
    const int64_t reporter =
        comm::AllReduceMin(error_ ? rank_ : std::numeric_limits<int64_t>::max(), comm_);
    if (reporter == rank_) {
      try {
        std::rethrow_exception(error_);
      } catch (const InputError& e) {
        std::fprintf(stderr, "fleetsim: error: %s\n", e.what());
      } catch (const std::exception& e) {
        std::fprintf(stderr, "fleetsim: internal error: %s\n", e.what());
      }
      std::fflush(stderr);
    }
    throw QuietExit{code};
  }

  SimTime NextLocalEvent() {
    SimTime next = kNever;
    if (const RoutedRequest* r = PeekArrival()) next = r->request.arrival;
    while (!queue_.empty()) {
      const auto [time, local] = queue_.top();
      if (locals_[static_cast<std::size_t>(local)]->key == time) {
        next = std::min(next, time);
        break;
      }
      queue_.pop();  // stale: the instance's key changed since
    }
    return next;
  }

  void Requeue(int32_t local) {
    LocalInstance& instance = *locals_[static_cast<std::size_t>(local)];
    const SimTime key = instance.engine->NextEventTime();
    if (key == instance.key) return;
    instance.key = key;
    if (key != kNever) queue_.push({key, local});
  }

  // Every instance's load into every gateway's view: one reduction over the fleet.
  void RefreshLoadViews() {
    static_assert(sizeof(InstanceLoad) == 2 * sizeof(int32_t));
    std::vector<InstanceLoad> loads(fleet_.instances.size());
    for (const auto& local : locals_) {
      const Instance& engine = *local->engine;
      InstanceLoad& load = loads[static_cast<std::size_t>(local->id)];
      load.outstanding = static_cast<int32_t>(engine.outstanding());
      load.kv_used_blocks = static_cast<int32_t>(engine.kv_cache().num_usable_blocks() -
                                                 engine.kv_cache().num_free_blocks());
    }
    comm::AllReduceSum(
        std::span<int32_t>(reinterpret_cast<int32_t*>(loads.data()), 2 * loads.size()), comm_);
    for (LocalGateway& gateway : gateways_)
      gateway.router.Refresh(loads);
    ++snapshots_;
  }

  // The end of the last whole step in which anything happened anywhere (`fallback` when
  // nothing did): where the time series stops, whatever the window length.
  SimTime LastStepEnd(SimTime fallback) {
    SimTime last = last_routed_;
    for (const auto& local : locals_)
      last = std::max(last, local->engine->last_active());
    last = comm::AllReduceMax(last, comm_);
    return last < 0 ? fallback : (last / step_ + 1) * step_;
  }

  // The reader sends the arrivals before `stop` to their gateways' ranks; every rank
  // keeps those of its own gateways, in workload order.
  void ShipArrivals(SimTime stop) {
    Guarded([&] {
      while (const RoutedRequest* next = PeekArrival()) {
        if (next->request.arrival >= stop) break;
        const RoutedRequest r = workload_.Take();
        AppendRoutedRequest(r, outgoing_[static_cast<std::size_t>(r.gateway % size_)]);
      }
    });
    for (RoutedRequest& r : ParseRoutedRequests(Exchange()))
      inbox_.push_back(std::move(r));
  }

  // Routes this window's arrivals at this rank's gateways into the outgoing buffers, one
  // per destination rank.
  void Route(SimTime start) {
    const int prefix_blocks = fleet_.cluster.gateways.router.prefix_blocks;
    for (; !inbox_.empty(); inbox_.pop_front()) {
      RoutedRequest& routed = inbox_.front();
      LocalGateway& gateway = gateways_[static_cast<std::size_t>(
          gateway_index_[static_cast<std::size_t>(routed.gateway)])];
      RouteRequest query;
      query.prompt_tokens = routed.request.input_tokens;
      query.prefix_key = PrefixKey(routed.request.block_hashes, prefix_blocks);
      routed.instance = gateway.router.Route(query);
      routed.instance_arrival = routed.request.arrival + delays_.gateway_to_instance;
      last_routed_ = routed.request.arrival;
      RequireOutsideLookahead(routed.instance_arrival, start + delays_.gateway_to_instance);
      const int owner = owner_of_[static_cast<std::size_t>(routed.instance)];
      AppendRoutedRequest(routed, outgoing_[static_cast<std::size_t>(owner)]);
      ++events_;
    }
  }

  // /timeseries keeps its intervals in memory until the end: a run reaching past
  // kMaxTimeseriesIntervals of them is refused before it samples there. Every rank knows
  // `stop` (it follows from the agreement), so every rank stops here together.
  void RequireTimeseriesRoom(SimTime stop) {
    const SimTime interval = timeseries_.interval();
    if (stop / interval < kMaxTimeseriesIntervals) return;
    const ClusterConfig& cluster = fleet_.cluster;
    error_ = std::make_exception_ptr(InputError(
        cluster.file, 0, "timeseries.interval_s",
        "the run reaches " + ShortestNumber(ToSeconds(stop)) + " s of simulated time, " +
            WithCommas(stop / interval) + " intervals of " + ShortestNumber(ToSeconds(interval)) +
            " s, more than the " + WithCommas(kMaxTimeseriesIntervals) +
            " /timeseries holds: raise interval_s or end the run sooner (--horizon); a long "
            "gap between the workload's arrivals also does this"));
    FailTogether(true);
  }

  // Every rank's values; [0] becomes the minimum, the rest sums. An error anywhere stops
  // every rank here, and so does an interrupt ([5]: this rank's signal, or 0).
  std::array<int64_t, 6> Agree(const std::array<int64_t, 6>& mine) {
    std::array<int64_t, 6> agreed = mine;
    comm::AllReduceMinSum(agreed, comm_);
    if (agreed[3] + agreed[4] > 0) FailTogether(agreed[3] > 0 && agreed[4] == 0);
    if (agreed[5] != 0) {
      progress_.Done();
      throw FleetInterrupted{static_cast<int>(comm::AllReduceMax(mine[5], comm_))};
    }
    return agreed;
  }

  int64_t Interrupted() const { return options_.interrupted ? options_.interrupted() : 0; }

  // The outgoing buffers to their ranks, one batch per destination, with the errors met
  // since the last meeting (every rank stops here if there are any); what this rank got.
  std::vector<std::byte> Exchange() {
    const std::array<int64_t, 2> mine = {input_errors_, other_errors_};
    comm::WindowExchange exchange = comm::ExchangeWindow(outgoing_, mine, comm_);
    for (std::vector<std::byte>& buffer : outgoing_)
      buffer.clear();
    std::array<int64_t, 2> errors = {0, 0};
    for (std::size_t at = 0; at < exchange.values.size(); at += mine.size()) {
      errors[0] += exchange.values[at];
      errors[1] += exchange.values[at + 1];
    }
    if (errors[0] + errors[1] > 0) FailTogether(errors[0] > 0 && errors[1] == 0);
    return std::move(exchange.bytes);
  }

  // The routed requests go to their instances' ranks.
  void Meet() {
    const std::vector<std::byte> received = Exchange();
    Guarded([&] { Deliver(received); });
  }

  void Deliver(const std::vector<std::byte>& received) {
    std::vector<RoutedRequest> arrivals = ParseRoutedRequests(received);
    // Sources send in their own order; instances take arrivals by (time, id).
    std::sort(arrivals.begin(), arrivals.end(), [](const RoutedRequest& a, const RoutedRequest& b) {
      return std::tie(a.instance_arrival, a.id) < std::tie(b.instance_arrival, b.id);
    });
    for (RoutedRequest& routed : arrivals) {
      const int32_t local = local_of_[static_cast<std::size_t>(routed.instance)];
      LocalInstance& instance = *locals_[static_cast<std::size_t>(local)];
      const EngineSetup& setup = fleet_.groups[static_cast<std::size_t>(instance.group)];
      auto request = std::make_unique<Request>();
      request->id = routed.id;
      request->name = std::move(routed.request.id);
      request->prompt_tokens = routed.request.input_tokens;
      request->max_output_tokens = routed.request.output_tokens;
      if (routed.request.hash_block_size > 0) {
        const std::vector<uint64_t> hashes =
            MapBlockHashes(routed.request, static_cast<int>(setup.layout.block_size));
        request->prompt_block_hashes.assign(hashes.begin(), hashes.end());
      }
      instance.engine->Arrive(std::move(request), routed.instance_arrival);
      Requeue(local);
    }
  }

  // Advances the window [start, stop), pausing at each time-series sample point (rounded
  // up to a whole step, where the per-step protocol sampled) to record the state there.
  void Advance(SimTime start, SimTime stop) {
    while (true) {
      const SimTime sample = timeseries_.next_sample_time();
      if (sample >= stop) break;
      const SimTime pause = (sample + step_ - 1) / step_ * step_;
      if (pause <= start || pause >= stop) break;
      AdvanceTo(pause);
      timeseries_.SampleUpTo(pause, [this](const Timeseries::Sampler& s) { Sample(s); });
    }
    AdvanceTo(stop);
  }

  // Runs every instance with an event before `until`, in parallel; then collects what
  // their steps left, on this thread.
  void AdvanceTo(SimTime until) {
    active_.clear();
    while (!queue_.empty() && queue_.top().first < until) {
      const auto [time, local] = queue_.top();
      queue_.pop();
      LocalInstance& instance = *locals_[static_cast<std::size_t>(local)];
      if (instance.key != time || instance.active) continue;
      instance.active = true;
      active_.push_back(local);
    }
    auto run = [&](std::size_t i) {
      locals_[static_cast<std::size_t>(active_[i])]->engine->RunUntil(until);
    };
    if (options_.threads <= 1 || active_.size() < 2) {
      for (std::size_t i = 0; i < active_.size(); ++i)
        run(i);
    } else {
      tbb::parallel_for(std::size_t{0}, active_.size(), run);
    }
    for (int32_t local : active_) {
      LocalInstance& instance = *locals_[static_cast<std::size_t>(local)];
      instance.active = false;
      instance.key = kNever;  // forces the requeue
      Collect(instance);
      Requeue(local);
    }
  }

  void Collect(LocalInstance& instance) {
    const int64_t steps = instance.engine->steps();
    events_ += steps - instance.steps_seen;
    instance.steps_seen = steps;
    for (const TokenTally& t : instance.tally)
      timeseries_.AddTokens(t.bucket, instance.group, t.prompt_tokens, t.generated_tokens);
    instance.tally.clear();
    for (const RequestRecord& record : instance.engine->TakeRecords()) {
      const output::RequestRow row = RequestRowOf(
          record, instance.id, GatewayOf(record.id, fleet_.cluster.gateways.count), delays_);
      output::InstanceRow& totals = instance.row;
      ++totals.requests;
      totals.prompt_tokens += record.input_tokens;
      totals.output_tokens += record.output_tokens;
      totals.preemptions += record.preemptions;
      totals.prefix_hit_tokens += record.cached_tokens;
      AddRow(row, instance.group);
    }
  }

  void AddRow(const output::RequestRow& row, int32_t group) {
    if (group >= 0) summaries_[static_cast<std::size_t>(group)].Add(row, fleet_.cluster.slo);
    fleet_summary_.Add(row, fleet_.cluster.slo);
    if (options_.request_rows) rows_.push_back(row);
    ++settled_;
  }

  void Sample(const Timeseries::Sampler& sample) {
    for (const auto& local : locals_) {
      const Instance& engine = *local->engine;
      sample(local->group, engine.num_running(), engine.num_waiting(),
             engine.kv_cache().num_usable_blocks() - engine.kv_cache().num_free_blocks(),
             engine.kv_cache().num_usable_blocks());
    }
  }

  // At the horizon (or the end): what never reached an instance, and what is not done.
  void Finish() {
    while (PeekArrival()) {
      const RoutedRequest r = workload_.Take();
      AddRow(UnroutedRowOf(r.request, r.id, r.gateway), -1);
    }
    std::array<int64_t, 2> errors = {input_errors_, other_errors_};
    comm::AllReduceSum(errors, comm_);
    if (errors[0] + errors[1] > 0) FailTogether(errors[0] > 0 && errors[1] == 0);
    for (auto& local : locals_) {
      local->engine->FlushPending();
      Collect(*local);
      local->row.steps = local->engine->steps();
      local->row.busy_ns = local->engine->busy_time();
    }
  }

  FleetRunStats Write(output::Hdf5File& file) {
    FleetRunStats stats;
    stats.requests = comm::AllReduceMax(workload_.read(), comm_);
    const int64_t instances = static_cast<int64_t>(fleet_.instances.size());
    if (options_.request_rows) {
      const OrderedRows<output::RequestRow> requests = ExchangeRowsByIndex(
          rows_, [](const output::RequestRow& r) { return r.id; }, stats.requests, comm_);
      file.WriteTable("/requests", output::RequestSchema(), requests.rows.data(), requests.offset,
                      requests.size(), stats.requests);
    }
    std::vector<output::InstanceRow> instance_rows;
    for (const auto& local : locals_)
      instance_rows.push_back(local->row);
    const OrderedRows<output::InstanceRow> ordered = ExchangeRowsByIndex(
        instance_rows, [](const output::InstanceRow& r) { return int64_t{r.id}; }, instances,
        comm_);
    file.WriteTable("/instances", output::InstanceSchema(), ordered.rows.data(), ordered.offset,
                    ordered.size(), instances);

    for (SummaryBuilder& s : summaries_) {
      s.AllReduce(comm_);
      stats.summary.push_back(s.Build());
    }
    fleet_summary_.AllReduce(comm_);
    stats.summary.push_back(fleet_summary_.Build());
    const int64_t summary_rows = static_cast<int64_t>(stats.summary.size());
    file.WriteTable("/summary", output::SummarySchema(), stats.summary.data(), 0,
                    rank_ == 0 ? summary_rows : 0, summary_rows);

    std::vector<std::string> names;
    for (const InstanceGroupConfig& g : fleet_.cluster.groups)
      names.push_back(g.name);
    const std::vector<output::TimeseriesRow> series = timeseries_.Reduce(names, comm_);
    const int64_t series_rows = comm::AllReduceMax(static_cast<int64_t>(series.size()), comm_);
    file.WriteTable("/timeseries", output::TimeseriesSchema(), series.data(), 0,
                    rank_ == 0 ? series_rows : 0, series_rows);

    if (options_.trace_steps) WriteSteps(file);

    std::array<int64_t, 4> totals = {0, events_, windows_, 0};
    for (const auto& local : locals_)
      totals[0] += local->engine->steps();
    comm::AllReduceSum(totals, comm_);
    stats.steps = totals[0];
    stats.events = totals[1];
    stats.windows = windows_;
    stats.snapshots = snapshots_;
    for (const EngineSetup& setup : fleet_.groups)
      stats.out_of_grid += setup.cost->OutOfGridLookups();
    stats.out_of_grid = comm::AllReduceMax(stats.out_of_grid, comm_);
    stats.placement = PlacementText();
    return stats;
  }

  void WriteSteps(output::Hdf5File& file) {
    struct IndexedStep {
      int64_t index;
      output::StepRow row;
    };
    std::vector<int64_t> counts(fleet_.instances.size(), 0);
    for (const auto& local : locals_)
      counts[static_cast<std::size_t>(local->id)] = static_cast<int64_t>(local->steps.size());
    comm::AllReduceSum(counts, comm_);
    std::vector<int64_t> first(counts.size() + 1, 0);
    for (std::size_t i = 0; i < counts.size(); ++i)
      first[i + 1] = first[i] + counts[i];
    std::vector<IndexedStep> indexed;
    for (const auto& local : locals_) {
      int64_t index = first[static_cast<std::size_t>(local->id)];
      for (const output::StepRow& row : local->steps)
        indexed.push_back({index++, row});
    }
    const OrderedRows<IndexedStep> ordered = ExchangeRowsByIndex(
        indexed, [](const IndexedStep& s) { return s.index; }, first.back(), comm_);
    std::vector<output::StepRow> rows;
    rows.reserve(ordered.rows.size());
    for (const IndexedStep& s : ordered.rows)
      rows.push_back(s.row);
    file.WriteTable("/steps", output::StepSchema(), rows.data(), ordered.offset, ordered.size(),
                    first.back());
  }

  // "rank 0: 0-31 | rank 1: 32-63" (every rank knows the whole partition).
  std::string PlacementText() const {
    const std::vector<int32_t>& owner = owner_of_;
    std::string text;
    for (int r = 0; r < size_; ++r) {
      text += (r ? " | rank " : "rank ") + std::to_string(r) + ":";
      int32_t run_start = -1;
      for (std::size_t i = 0; i <= owner.size(); ++i) {
        const bool in = i < owner.size() && owner[i] == r;
        if (in && run_start < 0) run_start = static_cast<int32_t>(i);
        if (!in && run_start >= 0) {
          const auto last = static_cast<int32_t>(i) - 1;
          text += " " + std::to_string(run_start) +
                  (last > run_start ? "-" + std::to_string(last) : std::string());
          run_start = -1;
        }
      }
    }
    text += " (" + std::to_string(options_.threads) + " TBB thread(s) per rank)";
    // An HDF5 attribute must stay well under 64 KiB; a fragmented placement is summarised.
    if (text.size() > 16384) {
      std::vector<int64_t> counts(static_cast<std::size_t>(size_), 0);
      for (int32_t r : owner)
        ++counts[static_cast<std::size_t>(r)];
      text = "instances per rank:";
      for (int r = 0; r < size_; ++r)
        text += " " + std::to_string(counts[static_cast<std::size_t>(r)]);
    }
    return text;
  }

  const FleetSetup& fleet_;
  const FleetRunOptions& options_;
  MPI_Comm comm_;
  int rank_, size_;
  WorkloadReader workload_;
  std::deque<RoutedRequest> inbox_;  // this window's arrivals at this rank's gateways
  NetworkDelays delays_;
  // Routing times and snapshot epochs are whole multiples of the lookahead `step_`; a
  // window is one epoch, or max_window_ of it.
  SimTime step_ = 1;
  SimTime epoch_ = 1;
  SimTime max_window_ = 1;       // whole steps, at most kMaxWindow
  int64_t snapshot_epoch_ = -1;  // the epoch of the load views the gateways hold
  SimTime last_routed_ = -1;     // the gateway arrival time of the last request routed here
  std::vector<std::unique_ptr<LocalInstance>> locals_;
  std::vector<int32_t> local_of_;  // by instance id; -1 when another rank has it
  std::vector<int32_t> owner_of_;  // rank of each instance
  std::vector<LocalGateway> gateways_;
  std::vector<std::vector<std::byte>> outgoing_;  // routed, to be sent at the next meeting
  std::vector<int32_t> gateway_index_;
  using Entry = std::pair<SimTime, int32_t>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> queue_;
  std::vector<int32_t> active_;
  Timeseries timeseries_;
  std::vector<SummaryBuilder> summaries_;
  SummaryBuilder fleet_summary_;
  std::vector<output::RequestRow> rows_;
  Progress progress_;
  std::exception_ptr error_;
  int64_t input_errors_ = 0;
  int64_t other_errors_ = 0;
  int64_t settled_ = 0;
  int64_t events_ = 0;
  int64_t windows_ = 0;
  int64_t snapshots_ = 0;
};

}  // namespace

int32_t GatewayOf(int64_t id, int gateways) {
  return static_cast<int32_t>(SplitMix64(static_cast<uint64_t>(id)) %
                              static_cast<uint64_t>(gateways));
}

FleetRunStats RunFleet(const FleetSetup& fleet, WorkloadSource* source,
                       const FleetRunOptions& options, output::Hdf5File& file, MPI_Comm comm) {
  tbb::global_control threads(tbb::global_control::max_allowed_parallelism,
                              static_cast<std::size_t>(std::max(1, options.threads)));
  FleetRun run(fleet, source, options, comm);
  return run.Run(file);
}

}  // namespace fleetsim
