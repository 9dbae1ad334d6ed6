#include "fleet/fleet_run.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <iterator>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include "comm/collectives.h"
#include "comm/error_agreement.h"
#include "core/check.h"
#include "core/format.h"
#include "core/input_error.h"
#include "fleet/checkpoint_files.h"
#include "fleet/gateway_shard.h"
#include "fleet/instance_shard.h"
#include "fleet/kv_transfer.h"
#include "fleet/load_exchange.h"
#include "fleet/progress.h"
#include "fleet/request_ledger.h"
#include "fleet/routed_request.h"
#include "fleet/window_clock.h"
#include "fleet/workload_reader.h"

namespace fleetsim {
namespace {

// A request routed in a window reaches its instance no earlier than the window's start
// plus the lookahead; anything earlier would reach an instance that may be past it.
void RequireOutsideLookahead(SimTime arrival, SimTime earliest) {
  if (arrival < earliest) {
    std::fprintf(stderr,
                 "fleetsim: internal error: a request sent inside the lookahead (arrives at %lld "
                 "ns, may not arrive before %lld ns)\n",
                 static_cast<long long>(arrival), static_cast<long long>(earliest));
    std::abort();
  }
}

// A prefill instance's hand-off made in a window reaches its decode instance no earlier
// than the window's start plus the hand-off lookahead: a window no longer than that lets
// every instance advance alone to its end (docs/DISAGGREGATION.md).
SimTime MaxWindowOf(const FleetSetup& fleet) {
  if (!fleet.cluster.disaggregated()) return kMaxWindow;
  return std::min(kMaxWindow, HandOffLookahead(fleet));
}

// Cost lookups outside the bundles' grids so far, by this rank's cost models.
int64_t OutOfGridLookups(const FleetSetup& fleet) {
  int64_t lookups = 0;
  for (const EngineSetup& setup : fleet.groups)
    lookups += setup.cost->OutOfGridLookups();
  return lookups;
}

// Every rank reads the workload when each has a source of its own that can pass over a
// request (run_job.cc opens one on every rank then); otherwise rank 0 alone reads.
WorkloadReader ReaderOf(WorkloadSource* source, int gateways, const comm::Comm& comm) {
  const bool own = source != nullptr && source->can_pass_over();
  if (comm::AllReduceMin(own ? 1 : 0, comm) == 1)
    return WorkloadReader(source, gateways, comm::RankOf(comm), comm::SizeOf(comm));
  return WorkloadReader(comm::RankOf(comm) == 0 ? source : nullptr, gateways);
}

class FleetRun {
 public:
  // `setup_out_of_grid`: the lookups the fleet's cost models counted before any instance
  // existed (every rank made them alike).
  FleetRun(const FleetSetup& fleet, WorkloadSource* source, const FleetRunOptions& options,
           const comm::Comm& comm, int64_t setup_out_of_grid)
      : fleet_(fleet),
        options_(options),
        comm_(comm),
        rank_(comm::RankOf(comm)),
        size_(comm::SizeOf(comm)),
        setup_out_of_grid_(setup_out_of_grid),
        delays_(DelaysOf(fleet.cluster)),
        clock_(delays_.gateway_to_instance, fleet.cluster.gateways.staleness_s, MaxWindowOf(fleet)),
        reader_(ReaderOf(source, fleet.cluster.gateways.count, comm)),
        gateways_(fleet.cluster.gateways, RoutingTableOf(fleet), options.seed, rank_, size_),
        instances_(fleet, fleet.Partition(size_), rank_, {options.trace_steps}),
        ledger_(fleet.cluster, fleet.models, fleet.model_of_group, options.request_rows),
        progress_(rank_ == 0 ? options.progress : ProgressMode::kOff),
        outgoing_(static_cast<std::size_t>(size_)),
        next_checkpoint_(options.checkpoint.every) {}

  // `file` on the process's lead thread, null on its other threads.
  FleetRunStats Run(output::Hdf5File* file) {
    if (!options_.checkpoint.restart.empty()) Restore();
    SimTime& window_end = window_end_;
    while (true) {
      const SimTime next = AgreeOnNextEvent(window_end);
      if (next == kNever || next >= options_.horizon) break;
      const Window window = clock_.WindowAt(next, window_end);
      window_end = window.end;
      const SimTime stop = std::min(window.end, options_.horizon);
      RequireTimeseriesRoom(stop);
      instances_.SampleUpTo(window.start);
      if (gateways_.uses_load() && clock_.EpochOf(window.start) != snapshot_epoch_) {
        snapshot_epoch_ = clock_.EpochOf(window.start);
        RefreshLoadViews();
      }
      // Everything the gateways receive in the window is routed now, from the snapshot
      // just taken, and reaches its instance's rank before any instance moves.
      ShipArrivals(stop);
      failure_.Guard([&] { Route(window.start); });
      const std::vector<std::byte> routed = Exchange();
      failure_.Guard([&] { instances_.Deliver(Received(routed)); });
      ForgetEndedConversations(stop);
      failure_.Guard([&] { instances_.Advance(window.start, stop, clock_, ledger_); });
      if (disaggregated_) ShipHandOffs(stop);
      ++windows_;
      const CheckpointOptions& checkpoint = options_.checkpoint;
      if (!checkpoint.dir.empty() && window_end >= next_checkpoint_) {
        next_checkpoint_ = (window_end / checkpoint.every + 1) * checkpoint.every;
        WriteCheckpoint();
      }
    }
    progress_.Done();
    const SimTime end = LastStepEnd(window_end);
    instances_.timeseries().ForgetSamplesAfter(end);
    instances_.SampleUpTo(end);
    Finish();
    return Write(file);
  }

 private:
  // Adds the wall time from its making to its end -- a meeting, a collective of the
  // window's ranks -- to `total`.
  class MeetingTimer {
   public:
    explicit MeetingTimer(int64_t& total) : total_(total) {}
    ~MeetingTimer() {
      total_ += std::chrono::duration_cast<std::chrono::nanoseconds>(
                    std::chrono::steady_clock::now() - start_)
                    .count();
    }
    MeetingTimer(const MeetingTimer&) = delete;
    MeetingTimer& operator=(const MeetingTimer&) = delete;

   private:
    int64_t& total_;
    std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  };

  // The first meeting of a window: the next event anywhere (empty stretches are skipped),
  // the counters for the progress line, and any failure or interrupt, which stops every
  // rank here.
  SimTime AgreeOnNextEvent(SimTime now) {
    SimTime next = kNever;
    if (const std::optional<SimTime> arrival = NextArrival()) next = *arrival;
    next = std::min(next, instances_.NextEvent());
    const int64_t interrupted = options_.interrupted ? options_.interrupted() : 0;
    // [0] by minimum, the rest summed.
    std::array<int64_t, 5> agreed = {next, ledger_.settled(), events(), failure_.count(),
                                     interrupted};
    {
      const MeetingTimer meeting(meeting_ns_);
      comm::AllReduceMinSum(agreed, comm_);
    }
    if (agreed[3] > 0) Fail();
    if (agreed[4] != 0) {
      progress_.Done();
      throw FleetInterrupted{static_cast<int>(comm::AllReduceMax(interrupted, comm_))};
    }
    progress_.Update(now, agreed[1], reader_.expected(), agreed[2]);
    return agreed[0];
  }

  // Collective, once some rank is known to hold a failure: every rank throws.
  [[noreturn]] void Fail() {
    progress_.Done();
    comm::AgreeOnFailure(failure_, comm_);
    throw std::logic_error("the fleet's ranks disagree on whether one failed");
  }

  // The workload's next arrival, whichever rank makes it; none once reading failed (here
  // or in an earlier part: the run stops at the next meeting either way).
  std::optional<SimTime> NextArrival() {
    std::optional<SimTime> next;
    failure_.Guard([&] { next = reader_.NextArrival(); });
    if (!failure_.failed()) return next;
    reader_.Abandon();
    return std::nullopt;
  }

  // The next request this rank's reader makes; none once reading failed.
  const RoutedRequest* PeekArrival() {
    const RoutedRequest* next = nullptr;
    failure_.Guard([&] { next = reader_.Peek(); });
    if (!failure_.failed()) return next;
    reader_.Abandon();
    return nullptr;
  }

  // The outgoing buffers to their ranks, in one batched exchange that also carries each
  // rank's failure count (every rank stops here if any failed); what this rank got.
  std::vector<std::byte> Exchange() {
    const std::array<int64_t, 1> mine = {failure_.count()};
    comm::WindowExchange exchange = [&] {
      const MeetingTimer meeting(meeting_ns_);
      return comm::ExchangeWindow(outgoing_, mine, comm_);
    }();
    for (std::vector<std::byte>& buffer : outgoing_)
      buffer.clear();
    int64_t failures = 0;
    for (int64_t v : exchange.values)
      failures += v;
    if (failures > 0) Fail();
    return std::move(exchange.bytes);
  }

  // The arrivals before `stop` at this rank's gateways into the inbox, in workload order:
  // made here when every rank reads (a read error then stops the ranks at the next
  // exchange, after routing), else sent by rank 0 to their gateways' ranks.
  void ShipArrivals(SimTime stop) {
    if (reader_.every_rank_reads()) {
      failure_.Guard([&] { reader_.TakeBefore(stop, inbox_); });
      if (failure_.failed()) reader_.Abandon();
      return;
    }
    failure_.Guard([&] { reader_.ShipBefore(stop, outgoing_, inbox_); });
    if (failure_.failed()) reader_.Abandon();
    const std::vector<std::byte> received = Exchange();
    failure_.Guard([&] {
      for (RoutedRequest& r : ParseRoutedRequests(received))
        inbox_.push_back(std::move(r));
    });
  }

  // Every arrival before `stop` has reached its instance now (none is handed over later
  // without disaggregation): once a simulated minute, instances forget what they kept for
  // conversations that will send them no more turns (InstanceShard::ForgetEndedConversations).
  // Memory only, so its cadence need not be saved.
  void ForgetEndedConversations(SimTime stop) {
    if (disaggregated_ || stop < next_forget_) return;
    next_forget_ = stop + kForgetEvery;
    failure_.Guard([&] { instances_.ForgetEndedConversations(stop); });
  }

  // Routes this window's arrivals at this rank's gateways into the outgoing buffers, one
  // per destination rank; a request for a model no group serves is rejected here.
  void Route(SimTime start) {
    const std::vector<int32_t>& owner_of = instances_.owner_of();
    for (; !inbox_.empty(); inbox_.pop_front()) {
      RoutedRequest& routed = inbox_.front();
      routed.instance = gateways_.Route(routed);
      last_decision_ = routed.request.arrival;
      ++decisions_;
      if (routed.instance == GatewayShard::kNoInstance) {
        ledger_.Add(NoModelRowOf(routed.request, routed.id, routed.gateway), -1);
        continue;
      }
      routed.decode_instance = gateways_.RouteDecode(routed, routed.instance);
      routed.instance_arrival = routed.request.arrival + delays_.gateway_to_instance;
      RequireOutsideLookahead(routed.instance_arrival, start + clock_.step());
      const int owner = owner_of[static_cast<std::size_t>(routed.instance)];
      if (owner == rank_)
        routed_here_.push_back(std::move(routed));
      else
        AppendRoutedRequest(routed, outgoing_[static_cast<std::size_t>(owner)]);
    }
  }

  // The requests for this rank's instances: those other ranks sent (`bytes`), and those
  // routed or handed over here, which never took the wire form (InstanceShard::Deliver
  // orders them by time and id, whatever their order here).
  std::vector<RoutedRequest> Received(std::span<const std::byte> bytes) {
    std::vector<RoutedRequest> here = std::move(routed_here_);
    routed_here_.clear();  // empty even if parsing throws
    std::vector<RoutedRequest> arrivals = ParseRoutedRequests(bytes);
    arrivals.reserve(arrivals.size() + here.size());
    std::move(here.begin(), here.end(), std::back_inserter(arrivals));
    return arrivals;
  }

  // The requests prefill instances handed over in the window go to their decode
  // instances' ranks in one more exchange; none reaches its instance before `stop`, where
  // every instance stands now.
  void ShipHandOffs(SimTime stop) {
    failure_.Guard([&] {
      const std::vector<int32_t>& owner_of = instances_.owner_of();
      for (RoutedRequest& routed : instances_.TakeHandOffs()) {
        RequireOutsideLookahead(routed.instance_arrival, stop);
        const int owner = owner_of[static_cast<std::size_t>(routed.instance)];
        if (owner == rank_)
          routed_here_.push_back(std::move(routed));
        else
          AppendRoutedRequest(routed, outgoing_[static_cast<std::size_t>(owner)]);
      }
    });
    const std::vector<std::byte> received = Exchange();
    failure_.Guard([&] { instances_.Deliver(Received(received)); });
  }

  // The loads that changed since the last snapshot, from every rank into every gateway's
  // view (fleet/load_exchange.h).
  void RefreshLoadViews() {
    const std::vector<LoadChange> mine = instances_.TakeLoadChanges();
    const std::vector<LoadChange> changes = [&] {
      const MeetingTimer meeting(meeting_ns_);
      return ExchangeLoadChanges(mine, comm_);
    }();
    failure_.Guard([&] { gateways_.Apply(changes); });
    ++snapshots_;
  }

  // /timeseries keeps its intervals in memory until the end: a run reaching past
  // kMaxTimeseriesIntervals of them is refused before it samples there. Every rank knows
  // `stop` (it follows from the agreement), so every rank stops here together.
  void RequireTimeseriesRoom(SimTime stop) {
    const SimTime interval = instances_.timeseries().interval();
    if (stop / interval < kMaxTimeseriesIntervals) return;
    progress_.Done();
    comm::OnEveryRank(comm_, [&] {
      throw InputError(
          fleet_.cluster.file, 0, "timeseries.interval_s",
          "the run reaches " + ShortestNumber(ToSeconds(stop)) + " s of simulated time, " +
              WithCommas(stop / interval) + " intervals of " + ShortestNumber(ToSeconds(interval)) +
              " s, more than the " + WithCommas(kMaxTimeseriesIntervals) +
              " /timeseries holds: raise interval_s or end the run sooner (--horizon); a long "
              "gap between the workload's arrivals also does this");
    });
  }

  // The end of the last whole step in which anything happened anywhere (`fallback` when
  // nothing did): where the time series stops, whatever the window length.
  SimTime LastStepEnd(SimTime fallback) {
    const SimTime last =
        comm::AllReduceMax(std::max(last_decision_, instances_.LastActive()), comm_);
    return last < 0 ? fallback : clock_.EndOfStep(last);
  }

  // At the horizon (or the end): what never reached a gateway's router, and what is not
  // done.
  void Finish() {
    while (PeekArrival()) {
      const RoutedRequest r = reader_.Take();
      ledger_.Add(UnroutedRowOf(r.request, r.id, r.gateway), -1);
    }
    failure_.Guard([&] { instances_.Finish(ledger_); });
    comm::AgreeOnFailure(failure_, comm_);
  }

  FleetRunStats Write(output::Hdf5File* file) {
    const RankCounters mine = {reader_.made(), instances_.steps(), decisions_,
                               OwnOutOfGridLookups() + restored_out_of_grid_};
    const RankCounters run = SumOverRanks(mine, setup_out_of_grid_, comm_);
    FleetRunStats stats;
    stats.requests = run.requests_read;
    stats.steps = run.steps;
    stats.events = run.steps + run.gateway_decisions;
    // Every rank takes part in every window and snapshot: the counts are the same on all.
    stats.windows = windows_;
    stats.snapshots = snapshots_;
    stats.out_of_grid = run.out_of_grid;
    stats.placement = PlacementText(instances_.owner_of(), size_, options_.threads);
    std::array<int64_t, 1> meetings = {meeting_ns_};
    comm::AllReduceSum(meetings, comm_);
    // In one process a "meeting" returns at once: there is no one to wait for.
    if (size_ > 1) stats.meeting_time_s = static_cast<double>(meetings[0]) / size_ / 1e9;

    const auto instances = static_cast<int64_t>(fleet_.instances.size());
    RunWriter writer(file, comm_);
    if (options_.request_rows) writer.WriteRequests(ledger_.rows(), stats.requests);
    writer.WriteInstances(instances_.InstanceRows(), instances);
    stats.summary = ledger_.Summaries(comm_);
    writer.WriteSummary(stats.summary);
    std::vector<std::string> groups;
    for (const InstanceGroupConfig& g : fleet_.cluster.groups)
      groups.push_back(g.name);
    writer.WriteTimeseries(instances_.timeseries(), groups, RoleSums());
    if (options_.trace_steps) writer.WriteSteps(instances_.Steps(), instances);
    return stats;
  }

  // A disaggregated fleet's /timeseries has a series per role ("role:prefill", ...): its
  // groups summed.
  std::vector<Timeseries::GroupSum> RoleSums() const {
    std::vector<Timeseries::GroupSum> sums;
    if (!disaggregated_) return sums;
    for (const InstanceRole role :
         {InstanceRole::kMixed, InstanceRole::kPrefill, InstanceRole::kDecode}) {
      Timeseries::GroupSum sum{"role:" + std::string(InstanceRoleName(role)), {}};
      for (std::size_t g = 0; g < fleet_.cluster.groups.size(); ++g) {
        if (fleet_.cluster.groups[g].role == role) sum.groups.push_back(g);
      }
      if (!sum.groups.empty()) sums.push_back(std::move(sum));
    }
    return sums;
  }

  // Collective, at a window boundary (nothing in flight: the inbox, the requests routed
  // here and the outgoing buffers are empty, every instance has stopped at the window's
  // end): each rank writes
  // its entities under their global ids, then rank 0 the manifest with the counters
  // summed over the ranks, and removes the checkpoint before (checkpoint_files.h).
  void WriteCheckpoint() {
    std::vector<int64_t> failed = {failure_.count()};
    comm::AllReduceSum(failed, comm_);
    if (failed[0] > 0) Fail();  // a failed part may have left requests in flight
    FLEETSIM_CHECK(inbox_.empty() && routed_here_.empty(), "a checkpoint with requests in flight");
    const std::string& dir = options_.checkpoint.dir;
    ++checkpoint_sequence_;
    // [0] decisions, [1] out-of-grid lookups, then each rank's file size and checksum.
    std::vector<int64_t> sums(2 + 2 * static_cast<std::size_t>(size_), 0);
    sums[0] = decisions_;
    sums[1] = OwnOutOfGridLookups() + restored_out_of_grid_;
    comm::OnEveryRank(comm_, [&] {
      CheckpointWriter w;
      w.Str("fleetsim-checkpoint-rank");
      w.I64(checkpoint_sequence_);
      w.I32(rank_);
      w.I32(size_);
      auto record = [&](CheckpointRecord kind, int64_t id, const CheckpointWriter& part) {
        w.U64(static_cast<uint64_t>(kind));
        w.I64(id);
        w.Blob(part.bytes());
      };
      for (const int32_t id : instances_.ids()) {
        CheckpointWriter part;
        instances_.SaveInstance(id, part);
        record(CheckpointRecord::kInstance, id, part);
      }
      for (const int32_t id : gateways_.ids()) {
        CheckpointWriter part;
        gateways_.SaveGateway(id, part);
        record(CheckpointRecord::kGateway, id, part);
      }
      CheckpointWriter ledger;
      ledger_.Save(ledger);
      record(CheckpointRecord::kLedger, rank_, ledger);
      CheckpointWriter series;
      instances_.timeseries().Save(series);
      record(CheckpointRecord::kTimeseries, rank_, series);
      const std::string bytes = w.Take();
      WriteFileAtomically(CheckpointRankPath(dir, checkpoint_sequence_, rank_), bytes);
      sums[2 + 2 * static_cast<std::size_t>(rank_)] = static_cast<int64_t>(bytes.size());
      sums[3 + 2 * static_cast<std::size_t>(rank_)] = static_cast<int64_t>(HashBytes(bytes));
    });
    comm::AllReduceSum(sums, comm_);
    const SimTime last_decision = comm::AllReduceMax(last_decision_, comm_);
    const int64_t workload_taken = comm::AllReduceMin(reader_.taken(), comm_);
    comm::OnRankZero(comm_, [&] {
      CheckpointManifest m;
      m.build = options_.checkpoint.build;
      m.inputs = options_.checkpoint.inputs;
      m.sequence = checkpoint_sequence_;
      m.ranks = size_;
      m.window_end = window_end_;
      m.snapshot_epoch = snapshot_epoch_;
      m.last_decision = last_decision;
      m.decisions = sums[0];
      m.windows = windows_;
      m.snapshots = snapshots_;
      m.out_of_grid = sums[1];
      m.workload_taken = workload_taken;
      m.next_checkpoint = next_checkpoint_;
      for (int r = 0; r < size_; ++r) {
        m.files.push_back({static_cast<uint64_t>(sums[2 + 2 * static_cast<std::size_t>(r)]),
                           static_cast<uint64_t>(sums[3 + 2 * static_cast<std::size_t>(r)])});
      }
      m.command_line = options_.checkpoint.command_line;
      WriteFileAtomically(CheckpointManifestPath(dir), ManifestText(m));
      RemoveOtherCheckpoints(dir, checkpoint_sequence_);
    });
    if (options_.checkpoint.kill_after == checkpoint_sequence_ - first_sequence_ + 1) {
      std::fflush(nullptr);
      std::raise(SIGKILL);
    }
  }

  // Collective, before the first window: every rank reads the manifest and every rank
  // file, and loads the entities it holds now (at any rank count: instances and
  // gateways by id; the ledger and time-series sums of old rank k on rank k mod size);
  // rank 0 takes the counters, and every reader moves the workload to where the
  // checkpoint stood.
  void Restore() {
    const std::string& dir = options_.checkpoint.restart;
    comm::OnEveryRank(comm_, [&] {
      const CheckpointManifest m = ReadCheckpointManifest(dir);
      std::size_t instances = 0;
      std::size_t gateways = 0;
      std::set<std::pair<uint64_t, int64_t>> loaded;  // (kind, id): each entity once
      for (int k = 0; k < m.ranks; ++k) {
        const std::string bytes = ReadCheckpointRankFile(dir, m, k);
        CheckpointReader r(bytes, CheckpointRankPath(dir, m.sequence, k));
        r.Require(r.Str() == "fleetsim-checkpoint-rank" && r.I64() == m.sequence && r.I32() == k &&
                      r.I32() == m.ranks,
                  "rank file header");
        const bool mine = k % size_ == rank_;
        while (!r.done()) {
          const uint64_t kind = r.U64();
          const int64_t id = r.I64();
          CheckpointReader part(r.Blob(), r.file());
          const auto id32 = static_cast<int32_t>(id);
          switch (static_cast<CheckpointRecord>(kind)) {
            case CheckpointRecord::kInstance:
              part.Part("instance " + std::to_string(id));
              if (!instances_.Holds(id32)) continue;
              if (!loaded.insert({kind, id}).second) part.Fail("saved twice (corrupt checkpoint)");
              instances_.LoadInstance(id32, part);
              ++instances;
              break;
            case CheckpointRecord::kGateway:
              part.Part("gateway " + std::to_string(id));
              if (!gateways_.Holds(id32)) continue;
              if (!loaded.insert({kind, id}).second) part.Fail("saved twice (corrupt checkpoint)");
              gateways_.LoadGateway(id32, part);
              ++gateways;
              break;
            case CheckpointRecord::kLedger:
              part.Part("request ledger");
              if (!mine) continue;
              ledger_.LoadMerge(part);
              break;
            case CheckpointRecord::kTimeseries:
              part.Part("timeseries");
              instances_.timeseries().LoadAdd(part, mine);
              break;
            default:
              r.Fail("unknown record kind " + std::to_string(kind));
          }
          part.Require(part.done(), "record length");
        }
      }
      const std::string manifest = CheckpointManifestPath(dir);
      if (instances != instances_.ids().size() || gateways != gateways_.ids().size())
        throw InputError(manifest, 0, "file",
                         "the rank files hold " + std::to_string(instances) + " of this rank's " +
                             std::to_string(instances_.ids().size()) + " instances and " +
                             std::to_string(gateways) + " of its " +
                             std::to_string(gateways_.ids().size()) +
                             " gateways (another cluster config?)");
      instances_.Restored();
      window_end_ = m.window_end;
      snapshot_epoch_ = m.snapshot_epoch;
      windows_ = m.windows;
      snapshots_ = m.snapshots;
      next_checkpoint_ = m.next_checkpoint;
      checkpoint_sequence_ = m.sequence;
      first_sequence_ = m.sequence + 1;
      // Counters summed over the ranks at the end: the checkpoint's totals go to rank 0.
      if (rank_ == 0) {
        decisions_ = m.decisions;
        last_decision_ = m.last_decision;
        restored_out_of_grid_ = m.out_of_grid;
      }
      reader_.SkipTo(m.workload_taken);
    });
  }

  // The out-of-grid lookups of this rank's instances so far. A process's ranks share the
  // fleet's cost models, which count for all of them: its lead thread reports them.
  int64_t OwnOutOfGridLookups() const {
    return comm_.lead() ? OutOfGridLookups(fleet_) - setup_out_of_grid_ : 0;
  }

  // Engine steps and gateway decisions on this rank so far.
  int64_t events() const { return instances_.steps() + decisions_; }

  const FleetSetup& fleet_;
  const FleetRunOptions& options_;
  comm::Comm comm_;
  int rank_, size_;
  int64_t setup_out_of_grid_;  // lookups every rank made alike while building the fleet
  NetworkDelays delays_;
  WindowClock clock_;
  WorkloadReader reader_;
  GatewayShard gateways_;
  InstanceShard instances_;
  RequestLedger ledger_;
  Progress progress_;
  comm::RankFailure failure_;
  std::deque<RoutedRequest> inbox_;  // this window's arrivals at this rank's gateways
  std::vector<RoutedRequest>
      routed_here_;  // routed or handed to this rank's instances, this window
  std::vector<std::vector<std::byte>> outgoing_;  // to each rank, sent at the next exchange
  bool disaggregated_ = fleet_.cluster.disaggregated();
  int64_t snapshot_epoch_ = -1;  // the epoch of the load views the gateways hold
  SimTime last_decision_ = -1;   // the gateway arrival time of the last request decided here
  int64_t decisions_ = 0;
  int64_t windows_ = 0;
  int64_t snapshots_ = 0;
  // Wall time (not simulated; not saved) this rank spent in the windows' meetings: the
  // collectives where it waits for the other ranks and exchanges with them.
  int64_t meeting_ns_ = 0;
  SimTime window_end_ = 0;  // the last window's end
  // Checkpoints: when the next is due, the number of the last one written (or restored
  // from), the first this process writes, and the out-of-grid lookups counted before it.
  SimTime next_checkpoint_;
  int64_t checkpoint_sequence_ = 0;
  int64_t first_sequence_ = 1;
  int64_t restored_out_of_grid_ = 0;
  // When instances next forget ended conversations: not state (a restart forgets at its
  // first window, which changes nothing but memory).
  static constexpr SimTime kForgetEvery = 60 * kNsPerSecond;
  SimTime next_forget_ = 0;
};

// A member added to FleetRun is state a checkpoint must hold (WriteCheckpoint, Restore):
// this size changes with it (checkpoint_support.cc says what to do). (1,768: the reader's
// request carries its conversation's end, and next_forget_, which is not state.)
static_assert(sizeof(FleetRun) == 1768, "FleetRun changed: save the new member in checkpoints");

// Which of the threads' failures the run ends with, on the calling thread: one a thread met
// alone (not from an agreement: it broke the meetings of the others, whose
// LocalRanksBroken says nothing new), else the agreed failure's own error (the one rank
// that rethrew it; made known to Agreed() here), else thread 0's (a QuietExit or
// FleetInterrupted every thread threw alike).
std::exception_ptr RunFailure(const std::vector<std::exception_ptr>& errors,
                              const std::vector<char>& agreed) {
  const auto is = [](const std::exception_ptr& e, auto tag) {
    try {
      std::rethrow_exception(e);
    } catch (const decltype(tag)&) {
      return true;
    } catch (...) {
      return false;
    }
  };
  for (std::size_t t = 0; t < errors.size(); ++t) {
    if (errors[t] && !agreed[t] && !is(errors[t], comm::LocalRanksBroken{}) &&
        !is(errors[t], QuietExit{}) && !is(errors[t], FleetInterrupted{}))
      return errors[t];
  }
  for (std::size_t t = 0; t < errors.size(); ++t) {
    if (errors[t] && agreed[t]) {
      comm::AdoptAgreed(errors[t]);
      return errors[t];
    }
  }
  if (errors[0]) return errors[0];
  for (const std::exception_ptr& e : errors) {
    if (e) return e;
  }
  return nullptr;
}

}  // namespace

FleetRunStats RunFleet(const FleetSetup& fleet, WorkloadSource* source,
                       const FleetRunOptions& options, output::Hdf5File& file, MPI_Comm comm,
                       const OpenWorkloadSource& open_source) {
  const int64_t setup_out_of_grid = OutOfGridLookups(fleet);  // before any instance exists
  const int threads = std::max(1, options.threads);
  if (threads == 1) {
    FleetRun run(fleet, source, options, comm, setup_out_of_grid);
    return run.Run(&file);
  }
  // Every thread a rank of its own (comm/communicator.h). Where every process reads its
  // share of a workload that can pass over requests, so does every thread, from its own
  // copy.
  std::vector<std::unique_ptr<WorkloadSource>> sources(static_cast<std::size_t>(threads));
  comm::OnEveryRank(comm, [&] {
    if (!source || !source->can_pass_over() || !open_source) return;
    for (std::size_t t = 1; t < sources.size(); ++t)
      sources[t] = open_source();
  });
  comm::LocalRanks local(threads, comm::ThreadsFitProcessors(threads, comm));
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(threads));
  std::vector<char> agreed(static_cast<std::size_t>(threads), 0);
  FleetRunStats stats;
  const auto rank = [&](int t) {
    const auto at = static_cast<std::size_t>(t);
    try {
      FleetRun run(fleet, t == 0 ? source : sources[at].get(), options, comm::Comm(comm, local, t),
                   setup_out_of_grid);
      FleetRunStats mine = run.Run(t == 0 ? &file : nullptr);
      if (t == 0) stats = std::move(mine);
    } catch (...) {
      errors[at] = std::current_exception();
      agreed[at] = comm::Agreed(errors[at]) ? 1 : 0;
      // A thread that failed alone would leave the others waiting for it; after a failure
      // every thread met, breaking changes nothing.
      local.Break();
    }
  };
  {
    std::vector<std::jthread> helpers;
    for (int t = 1; t < threads; ++t)
      helpers.emplace_back(rank, t);
    rank(0);  // the calling thread, the one that talks MPI
  }
  if (const std::exception_ptr failure = RunFailure(errors, agreed))
    std::rethrow_exception(failure);
  return stats;
}

}  // namespace fleetsim
