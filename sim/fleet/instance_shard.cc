#include "fleet/instance_shard.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>

#include "core/check.h"
#include "fleet/kv_transfer.h"
#include "fleet/workload_reader.h"

namespace fleetsim {

// One instance this rank simulates, with what its steps leave for the shard.
struct InstanceShard::Local {
  int32_t id = 0;
  int32_t group = 0;
  std::unique_ptr<FleetEngine> engine;  // one engine, or a data-parallel one's ranks
  std::vector<output::StepRow> steps;
  std::vector<TokenTally> tally;  // drained after a pass
  output::InstanceRow row{};
  // Prefill/decode disaggregation. A prefill instance keeps each request as routed until
  // it hands it over; the hand-offs (drained after a pass); the
  // ends of its transfers, by link, that may still be in flight. A decode instance keeps
  // each request's prefill leg until its record settles.
  std::unordered_map<int64_t, RoutedRequest> to_hand_off;
  std::vector<RoutedRequest> handed_off;
  std::vector<std::pair<SimTime, KvLinkKind>> transfers;
  std::unordered_map<int64_t, PrefillLeg> legs;
  // Scratch of one pass, meaningless between passes (so not saved), and no memory of its
  // own: its arrivals in Deliver's list (the first and last, chained through
  // InstanceShard::next_arrival_), and its next event, load and steps as its engine left
  // them (Snapshot).
  int32_t first_arrival = -1, last_arrival = -1;
  SimTime next_event = kNever;
  InstanceLoad load;
  int64_t steps_now = 0;
};

NetworkDelays DelaysOf(const ClusterConfig& cluster) {
  NetworkDelays delays;
  delays.gateway_to_instance =
      std::max<SimTime>(1, SecondsToSimTime(cluster.latency.gateway_to_instance_s));
  delays.instance_to_client = SecondsToSimTime(cluster.latency.instance_to_client_s);
  return delays;
}

InstanceShard::InstanceShard(const FleetSetup& fleet, std::vector<int32_t> owner_of, int rank,
                             InstanceShardOptions options)
    : fleet_(fleet),
      owner_of_(std::move(owner_of)),
      options_(options),
      delays_(DelaysOf(fleet.cluster)),
      timeseries_(fleet.cluster.groups.size(),
                  std::max<SimTime>(1, SecondsToSimTime(fleet.cluster.timeseries_interval_s))) {
  local_of_.assign(fleet_.instances.size(), -1);
  for (std::size_t i = 0; i < owner_of_.size(); ++i) {
    if (owner_of_[i] != rank) continue;
    const FleetInstanceInfo& info = fleet_.instances[i];
    const EngineSetup& setup = fleet_.groups[static_cast<std::size_t>(info.group)];
    const InstanceGroupConfig& group = fleet_.cluster.groups[static_cast<std::size_t>(info.group)];
    auto local = std::make_unique<Local>();
    local->id = info.id;
    local->group = info.group;
    local->engine = MakeFleetEngine(setup, group);
    output::InstanceRow& row = local->row;
    row.id = info.id;
    row.tp = setup.engine.tp;
    row.dp = group.dp;
    output::CopyName(row.group, group.name);
    output::CopyName(row.hardware, group.hardware);
    output::CopyName(row.model, setup.card.name);
    output::CopyName(row.pool,
                     fleet_.cluster.pools[static_cast<std::size_t>(info.placement.pool)].name);
    row.node = info.placement.node;
    row.first_gpu = info.placement.first_gpu;
    row.capacity_tokens_per_s = info.capacity;
    row.block_size = setup.layout.block_size;
    row.pool_blocks = setup.num_blocks * group.dp;  // over its DP ranks
    output::CopyName(row.role, InstanceRoleName(group.role));
    Local* self = local.get();
    if (group.role == InstanceRole::kPrefill) {
      local->engine->single()->OnHandOff(
          [this, self](const Request& request, const RequestRecord& record) {
            return HandOff(*self, request, record);
          });
    }
    const SimTime interval = timeseries_.interval();
    const bool trace = options_.trace_steps;
    const auto record = [self, interval, trace](int32_t dp_rank, const StepRecord& s) {
      AddTokens(self->tally, (s.start + s.duration) / interval, s.prefill_tokens,
                s.generated_tokens);
      if (!trace) return;
      self->steps.push_back({self->id, static_cast<int32_t>(s.draft_tokens), s.start, s.duration,
                             s.prefill_tokens, s.prefill_chunks, s.decodes, s.generated_tokens,
                             s.preemptions, s.cache_hit_tokens, s.running, s.waiting, s.kv_usage,
                             s.decode_context_mean, s.decode_context_max,
                             static_cast<int32_t>(s.accepted_tokens), dp_rank});
    };
    // An engine of one instance tallies its tokens itself when no step is traced: no
    // record and no std::function call per step (3.3 % of the 1,024-instance benchmark's
    // instructions, bench/RESULTS.md); a traced one takes the record directly, not through
    // the adapter's second call.
    if (Instance* one = local->engine->single()) {
      if (trace) {
        one->OnStep([record](const StepRecord& s) { record(-1, s); });
      } else {
        one->TallyTokens(interval, &self->tally);
      }
    } else {
      local->engine->OnStep(record);
    }
    local_of_[i] = static_cast<int32_t>(locals_.size());
    locals_.push_back(std::move(local));
    queued_.emplace_back();
  }
}

InstanceShard::~InstanceShard() = default;

template <typename Owned, typename Then>
void InstanceShard::Pass(const std::vector<int32_t>& locals, const Owned& owned, const Then& then) {
  const auto instance = [this](int32_t local) -> Local& {
    return *locals_[static_cast<std::size_t>(local)];
  };
  // Each instance in one go, while its state is in the cache.
  for (const int32_t local : locals) {
    owned(instance(local));
    then(local);
  }
}

void InstanceShard::Deliver(std::vector<RoutedRequest> arrivals) {
  // Sources send in their own order; instances take arrivals by (time, id).
  std::sort(arrivals.begin(), arrivals.end(), [](const RoutedRequest& a, const RoutedRequest& b) {
    return std::tie(a.instance_arrival, a.id) < std::tie(b.instance_arrival, b.id);
  });
  // Each instance's arrivals, chained in that order.
  delivered_.clear();
  next_arrival_.assign(arrivals.size(), -1);
  for (std::size_t i = 0; i < arrivals.size(); ++i) {
    const int32_t local = local_of_[static_cast<std::size_t>(arrivals[i].instance)];
    Local& instance = *locals_[static_cast<std::size_t>(local)];
    const auto at = static_cast<int32_t>(i);
    if (instance.first_arrival < 0) {
      instance.first_arrival = at;
      delivered_.push_back(local);
    } else {
      next_arrival_[static_cast<std::size_t>(instance.last_arrival)] = at;
    }
    instance.last_arrival = at;
  }
  Pass(
      delivered_,
      [this, &arrivals](Local& instance) {
        ArriveAll(instance, arrivals);
        Snapshot(instance);
      },
      [this](int32_t local) {
        Requeue(local);
        Touch(local);
      });
}

void InstanceShard::ForgetEndedConversations(SimTime arrived_before) {
  for (const auto& local : locals_) {
    if (Instance* one = local->engine->single()) one->ForgetEndedConversations(arrived_before);
  }
}

void InstanceShard::ArriveAll(Local& instance, std::vector<RoutedRequest>& arrivals) {
  const EngineSetup& setup = fleet_.groups[static_cast<std::size_t>(instance.group)];
  for (int32_t at = instance.first_arrival; at >= 0;
       at = next_arrival_[static_cast<std::size_t>(at)]) {
    RoutedRequest& routed = arrivals[static_cast<std::size_t>(at)];
    auto request = std::make_unique<Request>();
    request->id = routed.id;
    // A request handed over later keeps its name in the routed copy for the decode side.
    request->name = routed.decode_instance >= 0 ? routed.request.id : std::move(routed.request.id);
    request->prompt_tokens = routed.request.input_tokens;
    request->max_output_tokens = routed.request.output_tokens;
    if (routed.request.hash_block_size > 0) {
      static_assert(std::is_same_v<BlockHash, uint64_t>, "the mapped hashes move in whole");
      const auto block_size = static_cast<int>(setup.layout.block_size);
      request->shared_hash_limit = MapSharedHashes(routed.request, block_size);
      request->family = routed.request.family;
      request->family_hash_start = MapFamilyHashes(routed.request, block_size);
      request->family_ends = routed.request.family_ends;
      // A request for a prefill instance keeps its hashes for the decode instance.
      request->prompt_block_hashes = routed.decode_instance >= 0
                                         ? MapBlockHashes(routed.request, block_size)
                                         : MapBlockHashes(std::move(routed.request), block_size);
    }
    if (routed.decode_instance >= 0) {
      // The gateway's request to a prefill instance asks for one token (vLLM's proxy sends
      // max_tokens=1 with do_remote_decode); the rest is the decode instance's.
      request->remote_decode = true;
      request->max_output_tokens = 1;
      instance.to_hand_off.emplace(routed.id, std::move(routed));
    } else if (routed.prefill.instance >= 0) {
      request->remote_prefilled = true;
      instance.legs.emplace(routed.id, routed.prefill);
    }
    instance.engine->Arrive(std::move(request), routed.instance_arrival);
  }
  instance.first_arrival = instance.last_arrival = -1;
}

void InstanceShard::Snapshot(Local& instance) {
  const FleetEngine& engine = *instance.engine;
  instance.next_event = engine.NextEventTime();
  instance.load = {static_cast<int32_t>(engine.outstanding()),
                   static_cast<int32_t>(engine.kv_used_blocks())};
  instance.steps_now = engine.steps();
}

SimTime InstanceShard::NextEvent() {
  while (!queue_.empty()) {
    const auto [time, local] = queue_.top();
    if (queued_[static_cast<std::size_t>(local)].key == time) return time;
    queue_.pop();  // stale: the instance's key changed since
  }
  return kNever;
}

void InstanceShard::Requeue(int32_t local) {
  Queued& queued = queued_[static_cast<std::size_t>(local)];
  const SimTime key = locals_[static_cast<std::size_t>(local)]->next_event;
  if (key == queued.key) return;
  queued.key = key;
  if (key != kNever) queue_.push({key, local});
}

void InstanceShard::Advance(SimTime start, SimTime stop, const WindowClock& clock,
                            RequestLedger& ledger) {
  while (true) {
    const SimTime sample = timeseries_.next_sample_time();
    if (sample >= stop) break;
    const SimTime pause = clock.StepAtOrAfter(sample);
    if (pause <= start || pause >= stop) break;
    AdvanceTo(pause, ledger);
    SampleUpTo(pause);
  }
  AdvanceTo(stop, ledger);
}

void InstanceShard::AdvanceTo(SimTime until, RequestLedger& ledger) {
  active_.clear();
  while (!queue_.empty() && queue_.top().first < until) {
    const auto [time, local] = queue_.top();
    queue_.pop();
    Queued& queued = queued_[static_cast<std::size_t>(local)];
    if (queued.key != time || queued.active) continue;
    queued.active = true;
    active_.push_back(local);
  }
  Pass(
      active_,
      [this, until, &ledger](Local& instance) {
        instance.engine->RunUntil(until);
        Settle(instance, ledger);
        Snapshot(instance);
      },
      [this](int32_t local) {
        Queued& queued = queued_[static_cast<std::size_t>(local)];
        queued.active = false;
        queued.key = kNever;  // forces the requeue
        CountSteps(local);
        Requeue(local);
        Touch(local);
      });
}

void InstanceShard::Settle(Local& instance, RequestLedger& ledger) {
  for (const TokenTally& t : instance.tally)
    timeseries_.AddTokens(t.bucket, instance.group, t.prompt_tokens, t.generated_tokens);
  instance.tally.clear();
  const int gateways = fleet_.cluster.gateways.count;
  std::vector<int32_t> dp_ranks;
  std::vector<RequestRecord> records = instance.engine->TakeRecords(dp_ranks);
  for (std::size_t i = 0; i < records.size(); ++i) {
    RequestRecord& record = records[i];
    output::InstanceRow& totals = instance.row;
    ++totals.requests;
    totals.prompt_tokens += record.input_tokens;
    totals.output_tokens += record.output_tokens;
    totals.preemptions += record.preemptions;
    totals.prefix_hit_tokens += record.cached_tokens;
    if (record.handed_off) continue;  // its decode instance settles it
    const int32_t gateway = GatewayOf(record.id, gateways);
    if (auto to_hand_off = instance.to_hand_off.find(record.id);
        to_hand_off != instance.to_hand_off.end()) {
      // Settled on the prefill instance (rejected, or unfinished at the horizon).
      output::RequestRow row = RequestRowOf(record, instance.id, gateway, delays_);
      row.prefill_instance = instance.id;
      instance.to_hand_off.erase(to_hand_off);
      ledger.Add(row, instance.group, -1);
      continue;
    }
    const auto leg = instance.legs.find(record.id);
    if (leg == instance.legs.end()) {
      output::RequestRow row = RequestRowOf(record, instance.id, gateway, delays_);
      if (!dp_ranks.empty()) row.dp_rank = dp_ranks[i];
      ledger.Add(row, instance.group, -1);
      continue;
    }
    // The prefill group's /summary row counts it too (docs/OUTPUT.md); the fleet's once.
    const int32_t prefill_group =
        leg->second.instance >= 0
            ? fleet_.instances.at(static_cast<std::size_t>(leg->second.instance)).group
            : -1;
    ledger.Add(DisaggregatedRowOf(record, leg->second, instance.id, gateway, delays_),
               instance.group, prefill_group);
    instance.legs.erase(leg);
  }
}

void InstanceShard::CountSteps(int32_t local) {
  const Local& instance = *locals_[static_cast<std::size_t>(local)];
  Queued& queued = queued_[static_cast<std::size_t>(local)];
  steps_ += instance.steps_now - queued.steps_seen;
  queued.steps_seen = instance.steps_now;
}

SimTime InstanceShard::HandOff(Local& instance, const Request& request,
                               const RequestRecord& record) {
  const auto it = instance.to_hand_off.find(record.id);
  FLEETSIM_CHECK(it != instance.to_hand_off.end(), "a hand-off of a request never routed here");
  RoutedRequest routed = std::move(it->second);
  instance.to_hand_off.erase(it);
  const int32_t decode = routed.decode_instance;
  const FleetInstanceInfo& target = fleet_.instances[static_cast<std::size_t>(decode)];
  const KvLink link = KvLinkBetween(fleet_, instance.id, decode);
  const int64_t bytes = KvTransferBytes(
      fleet_.groups[static_cast<std::size_t>(target.group)].layout, record.input_tokens);
  // The prefill answer reaches the gateway, whose request reaches the decode instance: it
  // then reads the KV (NIXL pulls), sharing the link with this instance's transfers still
  // in flight on it. First tokens come in step order, so the ends before this start are
  // done for every later one too.
  const SimTime start =
      record.first_token + delays_.instance_to_client + delays_.gateway_to_instance;
  std::erase_if(instance.transfers, [&](const auto& t) { return t.first <= start; });
  int in_flight = 1;
  for (const auto& t : instance.transfers)
    in_flight += t.second == link.kind ? 1 : 0;
  const SimTime end = start + KvTransferTime(link, bytes, in_flight);
  instance.transfers.emplace_back(end, link.kind);
  PrefillLeg& leg = routed.prefill;
  leg.instance = instance.id;
  leg.preemptions = request.num_preemptions;
  leg.arrival = record.arrival;
  leg.first_scheduled = record.first_scheduled;
  leg.first_token = record.first_token;
  leg.transfer_start = start;
  leg.transfer_end = end;
  leg.transfer_bytes = bytes;
  leg.cached_tokens = request.cached_tokens;
  routed.instance = decode;
  routed.decode_instance = -1;
  routed.instance_arrival = end;
  instance.handed_off.push_back(std::move(routed));
  return end;
}

std::vector<RoutedRequest> InstanceShard::TakeHandOffs() {
  std::vector<RoutedRequest> out;
  for (const auto& local : locals_) {
    for (RoutedRequest& routed : local->handed_off)
      out.push_back(std::move(routed));
    local->handed_off.clear();
  }
  std::sort(out.begin(), out.end(), [](const RoutedRequest& a, const RoutedRequest& b) {
    return std::tie(a.instance_arrival, a.id) < std::tie(b.instance_arrival, b.id);
  });
  return out;
}

void InstanceShard::SampleUpTo(SimTime now) {
  timeseries_.SampleUpTo(now, [this](const Timeseries::Sampler& s) { Sample(s); });
}

void InstanceShard::Sample(const Timeseries::Sampler& sample) const {
  for (const auto& local : locals_) {
    const FleetEngine& engine = *local->engine;
    sample(local->group, engine.num_running(), engine.num_waiting(), engine.kv_used_blocks(),
           engine.kv_usable_blocks());
  }
}

void InstanceShard::Touch(int32_t local) {
  Queued& queued = queued_[static_cast<std::size_t>(local)];
  if (queued.touched) return;
  queued.touched = true;
  touched_.push_back(local);
}

std::vector<LoadChange> InstanceShard::TakeLoadChanges() {
  std::sort(touched_.begin(), touched_.end());  // locals are in id order
  std::vector<LoadChange> changes;
  for (const int32_t local : touched_) {
    const Local& instance = *locals_[static_cast<std::size_t>(local)];
    Queued& queued = queued_[static_cast<std::size_t>(local)];
    queued.touched = false;
    const InstanceLoad load = instance.load;  // as of its last pass (Snapshot)
    if (load.outstanding == queued.reported.outstanding &&
        load.kv_used_blocks == queued.reported.kv_used_blocks)
      continue;
    queued.reported = load;
    changes.push_back({instance.id, load});
  }
  touched_.clear();
  return changes;
}

SimTime InstanceShard::LastActive() const {
  SimTime last = -1;
  for (const auto& local : locals_)
    last = std::max(last, local->engine->last_active());
  return last;
}

void InstanceShard::Finish(RequestLedger& ledger) {
  std::vector<int32_t> all(locals_.size());
  std::iota(all.begin(), all.end(), 0);
  Pass(
      all,
      [this, &ledger](Local& instance) {
        instance.engine->FlushPending();
        Settle(instance, ledger);
        Snapshot(instance);
        instance.row.steps = instance.engine->steps();
        instance.row.busy_ns = instance.engine->busy_time();
      },
      [this](int32_t local) { CountSteps(local); });
}

std::vector<output::InstanceRow> InstanceShard::InstanceRows() const {
  std::vector<output::InstanceRow> rows;
  rows.reserve(locals_.size());
  for (const auto& local : locals_)
    rows.push_back(local->row);
  return rows;
}

std::vector<InstanceShard::StepRows> InstanceShard::Steps() const {
  std::vector<StepRows> steps;
  steps.reserve(locals_.size());
  for (const auto& local : locals_)
    steps.push_back({local->id, &local->steps});
  return steps;
}

std::vector<int32_t> InstanceShard::ids() const {
  std::vector<int32_t> ids;
  for (const auto& local : locals_)
    ids.push_back(local->id);
  return ids;
}

namespace {

// A routed request in its wire form (fleet/routed_request.h), which carries every field.
void SaveRouted(CheckpointWriter& w, const RoutedRequest& routed) {
  std::vector<std::byte> wire;
  AppendRoutedRequest(routed, wire);
  w.Blob({reinterpret_cast<const char*>(wire.data()), wire.size()});
}

RoutedRequest LoadRouted(CheckpointReader& r) {
  const std::string_view wire = r.Blob();
  std::vector<RoutedRequest> parsed;
  try {
    parsed = ParseRoutedRequests({reinterpret_cast<const std::byte*>(wire.data()), wire.size()});
  } catch (const std::runtime_error&) {
    r.Fail("a routed request is cut short");
  }
  r.Require(parsed.size() == 1, "a routed request");
  return std::move(parsed.front());
}

// A map's keys in order: saved maps list their entries by request id, whatever order the
// hash table keeps them in.
template <typename Map>
std::vector<int64_t> SortedKeys(const Map& map) {
  std::vector<int64_t> keys;
  keys.reserve(map.size());
  for (const auto& entry : map)
    keys.push_back(entry.first);
  std::sort(keys.begin(), keys.end());
  return keys;
}

}  // namespace

void InstanceShard::SaveInstance(int32_t id, CheckpointWriter& w) const {
  // A field added to Local is state the checkpoint must hold: save it below and in
  // LoadInstance (docs/CHECKPOINT.md), then update this size. (A pass's scratch -- the
  // arrivals' chain, the settled rows' place, the snapshot -- is not state: unused between
  // passes, the snapshot remade by Restored.)
  static_assert(sizeof(Local) == 624, "InstanceShard::Local changed: save the new field");
  const Local& local =
      *locals_.at(static_cast<std::size_t>(local_of_.at(static_cast<std::size_t>(id))));
  // At a window boundary the window's hand-offs have gone to their decode instances.
  FLEETSIM_CHECK(local.handed_off.empty(),
                 "a checkpoint is taken after the window's hand-offs are shipped");
  // One engine, or a data-parallel one's ranks and lock-step state.
  local.engine->Save(w);
  const Queued& queued =
      queued_[static_cast<std::size_t>(local_of_.at(static_cast<std::size_t>(id)))];
  w.Pod(queued.reported);
  w.I64(queued.steps_seen);
  w.Pods(local.steps);
  w.Pods(local.tally);
  w.Pod(local.row);
  // Prefill/decode disaggregation: what a prefill instance keeps until it hands a request
  // over, its transfers that may still occupy a link, and a decode instance's prefill legs
  // of requests it has not settled (requests in transit sit in its engine's arrivals).
  w.U64(local.to_hand_off.size());
  for (const int64_t key : SortedKeys(local.to_hand_off))
    SaveRouted(w, local.to_hand_off.at(key));
  w.U64(local.transfers.size());
  for (const auto& [end, kind] : local.transfers) {
    w.I64(end);
    w.I32(static_cast<int32_t>(kind));
  }
  w.U64(local.legs.size());
  for (const int64_t key : SortedKeys(local.legs)) {
    w.I64(key);
    w.Pod(local.legs.at(key));
  }
}

void InstanceShard::LoadInstance(int32_t id, CheckpointReader& r) {
  Local& local = *locals_.at(static_cast<std::size_t>(local_of_.at(static_cast<std::size_t>(id))));
  local.engine->Load(r);
  Queued& queued = queued_[static_cast<std::size_t>(local_of_.at(static_cast<std::size_t>(id)))];
  queued.reported = r.Pod<InstanceLoad>();
  queued.steps_seen = r.I64();
  local.steps = r.Pods<output::StepRow>();
  local.tally = r.Pods<TokenTally>();
  const output::InstanceRow row = r.Pod<output::InstanceRow>();
  r.Require(row.id == id && row.pool_blocks == local.row.pool_blocks, "instance row");
  local.row = row;
  const uint64_t to_hand_off = r.Count(8);
  for (uint64_t i = 0; i < to_hand_off; ++i) {
    RoutedRequest routed = LoadRouted(r);
    r.Require(routed.instance == id && routed.decode_instance >= 0 &&
                  static_cast<std::size_t>(routed.decode_instance) < owner_of_.size(),
              "a request to hand over");
    const int64_t request = routed.id;
    r.Require(local.to_hand_off.emplace(request, std::move(routed)).second,
              "a request to hand over, listed twice");
  }
  local.transfers.resize(r.Count(12));
  for (auto& [end, kind] : local.transfers) {
    end = r.I64();
    const int32_t saved_kind = r.I32();
    r.Require(saved_kind >= 0 && saved_kind <= static_cast<int32_t>(KvLinkKind::kNetwork),
              "a transfer's link");
    kind = static_cast<KvLinkKind>(saved_kind);
  }
  const uint64_t legs = r.Count(8 + sizeof(PrefillLeg));
  for (uint64_t i = 0; i < legs; ++i) {
    const int64_t request = r.I64();
    r.Require(local.legs.emplace(request, r.Pod<PrefillLeg>()).second,
              "a prefill leg, listed twice");
  }
  steps_ += queued.steps_seen;
}

void InstanceShard::Restored() {
  for (std::size_t i = 0; i < locals_.size(); ++i) {
    const auto local = static_cast<int32_t>(i);
    queued_[i].key = kNever;
    Snapshot(*locals_[i]);
    Requeue(local);
    Touch(local);
  }
}

}  // namespace fleetsim
