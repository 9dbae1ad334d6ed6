// Checkpoints of the fleet's parts (docs/CHECKPOINT.md): a router saved mid-run and loaded
// into one built alike picks exactly what the original picks from then on, under every
// policy form (views, snapshots, random streams, the weighted round-robin position); a
// prefill/decode shard cut with KV transfers in flight and loaded at two "ranks" settles
// every request as the uninterrupted one; what checkpoints do not cover is refused by name;
// time-series sums and ledgers saved on several "ranks" and loaded on fewer add up to what
// one would hold; a manifest that is missing, truncated or of another format is one
// located InputError.
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <unistd.h>
#include <vector>

#include <gtest/gtest.h>

#include "core/checkpoint_io.h"
#include "core/input_error.h"
#include "core/random.h"
#include "fleet/checkpoint_files.h"
#include "fleet/checkpoint_support.h"
#include "fleet/instance_shard.h"
#include "fleet/kv_transfer.h"
#include "fleet/request_ledger.h"
#include "fleet/router.h"
#include "fleet/timeseries.h"
#include "perf/synthetic_bundle.h"
#include "support/temp_file.h"

namespace fleetsim {
namespace {

std::vector<RouteTarget> Targets() {
  std::vector<RouteTarget> targets;
  for (int32_t i = 0; i < 9; ++i)
    targets.push_back({i, 1000.0 * (1 + i % 3), 500 + 100 * i, 16});
  return targets;
}

// Routes `count` requests from `rng`, with a load snapshot every 7.
std::vector<int32_t> Drive(Router& router, Rng& rng, int count) {
  std::vector<int32_t> picks;
  for (int i = 0; i < count; ++i) {
    if (i % 7 == 6) {
      std::vector<LoadChange> changes;
      for (int32_t k = 0; k < 9; ++k) {
        if (rng.NextU64() % 3 == 0)
          changes.push_back({k,
                             {static_cast<int32_t>(rng.NextU64() % 20),
                              static_cast<int32_t>(rng.NextU64() % 400)}});
      }
      router.Apply(changes);
    }
    RouteRequest request;
    request.prompt_tokens = static_cast<int64_t>(rng.NextU64() % 3000);
    if (rng.NextU64() % 2 == 0) request.prefix_key = rng.NextU64() % 5;
    picks.push_back(router.Route(request));
  }
  return picks;
}

TEST(RouterCheckpoint, ALoadedRouterPicksAsTheOriginalUnderEveryPolicy) {
  for (RoutingPolicy policy :
       {RoutingPolicy::kRoundRobin, RoutingPolicy::kRandom, RoutingPolicy::kLeastOutstanding,
        RoutingPolicy::kLeastKv, RoutingPolicy::kPowerOfTwo, RoutingPolicy::kPrefixAffinity}) {
    for (bool weighted : {false, true}) {
      SCOPED_TRACE(std::to_string(static_cast<int>(policy)) + " weighted " +
                   std::to_string(weighted));
      RouterConfig config;
      config.policy = policy;
      config.capacity_weighted = weighted;
      Router original(config, Targets(), 42);
      Rng traffic(7);
      Drive(original, traffic, 53);  // mid-snapshot, mid-cycle
      CheckpointWriter saved;
      original.Save(saved);
      Router loaded(config, Targets(), 999);  // another seed: the stream must come from the file
      CheckpointReader reader(saved.bytes(), "router");
      loaded.Load(reader);
      EXPECT_TRUE(reader.done());
      CheckpointWriter again;
      loaded.Save(again);
      EXPECT_EQ(saved.bytes(), again.bytes());
      Rng same_traffic = traffic;
      EXPECT_EQ(Drive(original, traffic, 300), Drive(loaded, same_traffic, 300));
    }
  }
}

TEST(TimeseriesCheckpoint, SumsSavedOnSeveralRanksAddUpOnOne) {
  const SimTime second = 1'000'000'000;
  Timeseries whole(2, second), rank0(2, second), rank1(2, second);
  auto sample = [&](Timeseries& series, int64_t running) {
    series.SampleUpTo(3 * second, [&](const Timeseries::Sampler& s) { s(1, running, 2, 30, 100); });
  };
  sample(rank0, 4);
  sample(rank1, 5);
  rank0.AddTokens(1, 0, 100, 7);
  rank1.AddTokens(2, 1, 50, 3);
  // One rank holding both ranks' instances.
  whole.SampleUpTo(3 * second, [&](const Timeseries::Sampler& s) {
    s(1, 4, 2, 30, 100);
    s(1, 5, 2, 30, 100);
  });
  whole.AddTokens(1, 0, 100, 7);
  whole.AddTokens(2, 1, 50, 3);
  Timeseries merged(2, second);
  for (const Timeseries* part : {&rank0, &rank1}) {
    CheckpointWriter w;
    part->Save(w);
    CheckpointReader r(w.bytes(), "ts");
    merged.LoadAdd(r);
  }
  CheckpointWriter a, b;
  whole.Save(a);
  merged.Save(b);
  EXPECT_EQ(a.bytes(), b.bytes());
  EXPECT_EQ(merged.next_sample_time(), whole.next_sample_time());
}

TEST(CheckpointSupport, SpeculationAndPrefillDecodeRolesAreCovered) {
  FleetSetup fleet;
  for (const InstanceRole role : {InstanceRole::kPrefill, InstanceRole::kDecode}) {
    InstanceGroupConfig group;
    group.name = std::string(InstanceRoleName(role));
    group.role = role;
    fleet.cluster.groups.push_back(group);
    fleet.groups.emplace_back();
    fleet.groups.back().engine.num_spec = 2;
  }
  EXPECT_EQ(CheckpointRefusal(fleet), std::nullopt);
}

// The refusal mechanism, with a feature of the test's own: the first group using it is
// named, with what the feature is.
TEST(CheckpointSupport, AnUncoveredFeatureIsRefusedNamingTheGroup) {
  FleetSetup fleet;
  for (const char* name : {"plain", "wide", "wider"}) {
    InstanceGroupConfig group;
    group.name = name;
    group.replicas = std::string(name) == "plain" ? 1 : 3;
    fleet.cluster.groups.push_back(group);
    fleet.groups.emplace_back();
  }
  const UncoveredFeature wide[] = {
      {[](const FleetSetup& f, std::size_t g) { return f.cluster.groups[g].replicas == 3; },
       [](const FleetSetup& f, std::size_t g) {
         return std::to_string(f.cluster.groups[g].replicas) + " replicas (a test feature)";
       }}};
  const std::optional<std::string> why = CheckpointRefusal(fleet, wide);
  ASSERT_TRUE(why.has_value());
  EXPECT_EQ(*why,
            "instance group wide: 3 replicas (a test feature) is not covered by "
            "checkpoints yet");
  fleet.cluster.groups[1].replicas = fleet.cluster.groups[2].replicas = 2;
  EXPECT_EQ(CheckpointRefusal(fleet, wide), std::nullopt);
}

// A prefill/decode fleet's instance shard: two prefill and two decode instances on the
// synthetic dense bundle, advanced in windows no longer than the hand-off lookahead, each
// window's hand-offs delivered at its end (as RunFleet ships them).
class PdShardCheckpoint : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::WriteDenseBundle(bundle_);
    const std::string group =
        "model: llama-3.1-8b, hardware: H100-SXM, tp: 1, replicas: 2, "
        "bundle: " +
        bundle_.dir() + ", engine: {num_gpu_blocks: 300}}\n";
    config_ = std::make_unique<testing::TempFile>(
        "pd.yaml", "instance_groups:\n  - {name: p, role: prefill, " + group +
                       "  - {name: d, role: decode, " + group +
                       "gateways: {count: 2, policy: round_robin}\n");
    fleet_ = std::make_unique<FleetSetup>(
        BuildFleetSetup(LoadClusterConfig(config_->path()),
                        [](const ModelCard&, const HardwareSpec&,
                           const EngineConfig&) -> std::string { throw std::logic_error(""); }));
    clock_ = std::make_unique<WindowClock>(DelaysOf(fleet_->cluster).gateway_to_instance, 0.05,
                                           HandOffLookahead(*fleet_));
  }

  // 60 requests 1 ms apart, request k to prefill instance k mod 2 and decode instance
  // 2 + (k / 2) mod 2, with long prompts (KV transfers of some length).
  static std::vector<RoutedRequest> Requests() {
    std::vector<RoutedRequest> out;
    for (int64_t k = 0; k < 60; ++k) {
      RoutedRequest r;
      r.id = k;
      r.gateway = static_cast<int32_t>(k % 2);
      r.instance = static_cast<int32_t>(k % 2);
      r.decode_instance = static_cast<int32_t>(2 + (k / 2) % 2);
      r.instance_arrival = 500'000 + 1'000'000 * k;
      r.request.id = "r" + std::to_string(k);
      r.request.arrival = 1'000'000 * k;
      r.request.input_tokens = 1500 + 37 * k;
      r.request.output_tokens = 5 + k % 13;
      r.request.hash_block_size = 16;
      r.request.block_hashes.assign(static_cast<std::size_t>(r.request.input_tokens / 16),
                                    static_cast<uint64_t>(k % 3));
      for (std::size_t b = 0; b < r.request.block_hashes.size(); ++b)
        r.request.block_hashes[b] = r.request.block_hashes[b] * 1000 + b;
      out.push_back(r);
    }
    return out;
  }

  // Advances window by window from `t` while anything is left, or until a window after
  // which a hand-off is still in transit (when `stop_in_transit`): true then.
  bool Run(InstanceShard& shard, RequestLedger& ledger, SimTime& t, bool stop_in_transit) {
    while (shard.NextEvent() != kNever) {
      const SimTime end = clock_->WindowAt(std::max(t, shard.NextEvent()), t).end;
      shard.Advance(t, end, *clock_, ledger);
      std::vector<RoutedRequest> hand_offs = shard.TakeHandOffs();
      bool in_transit = false;
      for (const RoutedRequest& r : hand_offs)
        in_transit |= r.instance_arrival > end;
      shard.Deliver(std::move(hand_offs));
      t = end;
      if (stop_in_transit && in_transit && ledger.settled() > 3) return true;
    }
    return false;
  }

  static std::vector<output::RequestRow> Rows(InstanceShard& shard, RequestLedger& ledger) {
    shard.Finish(ledger);
    std::vector<output::RequestRow> rows = ledger.rows();
    std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
    return rows;
  }

  RequestLedger Ledger() const {
    return RequestLedger(fleet_->cluster, fleet_->models, fleet_->model_of_group, true);
  }

  testing::SyntheticBundle bundle_;
  std::unique_ptr<testing::TempFile> config_;
  std::unique_ptr<FleetSetup> fleet_;
  std::unique_ptr<WindowClock> clock_;
};

TEST_F(PdShardCheckpoint, CutWithTransfersInFlightContinuesIdentically) {
  InstanceShard whole(*fleet_, fleet_->Partition(1), 0, {});
  RequestLedger all = Ledger();
  whole.Deliver(Requests());
  SimTime t = 0;
  ASSERT_FALSE(Run(whole, all, t, false));
  const std::vector<output::RequestRow> expected = Rows(whole, all);
  ASSERT_EQ(expected.size(), 60u);
  int64_t handed_over = 0;
  for (const output::RequestRow& row : expected)
    handed_over += row.prefill_instance >= 0 && std::string(row.state) == "finished";
  EXPECT_GT(handed_over, 50);

  // Cut at a window after which a request's KV is still moving: the prefill instance holds
  // its blocks and its link's share, the decode instance has it on the way.
  InstanceShard cut(*fleet_, fleet_->Partition(1), 0, {});
  RequestLedger before = Ledger();
  cut.Deliver(Requests());
  t = 0;
  ASSERT_TRUE(Run(cut, before, t, true)) << "no window ended with a transfer in flight";
  ASSERT_LT(before.settled(), 60);
  CheckpointWriter ledger_bytes;
  before.Save(ledger_bytes);
  std::vector<std::string> saved;
  for (const int32_t id : cut.ids()) {
    CheckpointWriter w;
    cut.SaveInstance(id, w);
    saved.push_back(w.Take());
  }

  // Loaded at two "ranks" of one process: each shard takes the instances it holds now,
  // and hand-offs go to whichever shard holds their decode instance.
  std::vector<std::unique_ptr<InstanceShard>> shards;
  std::vector<RequestLedger> ledgers;
  for (int rank = 0; rank < 2; ++rank) {
    shards.push_back(std::make_unique<InstanceShard>(*fleet_, fleet_->Partition(2), rank,
                                                     InstanceShardOptions{}));
    ledgers.push_back(Ledger());
    for (std::size_t id = 0; id < saved.size(); ++id) {
      if (!shards.back()->Holds(static_cast<int32_t>(id))) continue;
      CheckpointReader r(saved[id], "ckpt");
      shards.back()->LoadInstance(static_cast<int32_t>(id), r);
      EXPECT_TRUE(r.done());
      CheckpointWriter again;  // everything loaded is saved again, byte for byte
      shards.back()->SaveInstance(static_cast<int32_t>(id), again);
      EXPECT_EQ(again.bytes(), saved[id]) << "instance " << id;
    }
    shards.back()->Restored();
  }
  CheckpointReader r(ledger_bytes.bytes(), "ckpt");
  ledgers[0].LoadMerge(r);
  const std::vector<int32_t> owner = fleet_->Partition(2);
  while (true) {
    const SimTime next = std::min(shards[0]->NextEvent(), shards[1]->NextEvent());
    if (next == kNever) break;
    const SimTime end = clock_->WindowAt(std::max(t, next), t).end;
    std::vector<std::vector<RoutedRequest>> to(2);
    for (int rank = 0; rank < 2; ++rank) {
      shards[static_cast<std::size_t>(rank)]->Advance(t, end, *clock_,
                                                      ledgers[static_cast<std::size_t>(rank)]);
      for (RoutedRequest& h : shards[static_cast<std::size_t>(rank)]->TakeHandOffs())
        to[static_cast<std::size_t>(owner[static_cast<std::size_t>(h.instance)])].push_back(
            std::move(h));
    }
    for (int rank = 0; rank < 2; ++rank)
      shards[static_cast<std::size_t>(rank)]->Deliver(
          std::move(to[static_cast<std::size_t>(rank)]));
    t = end;
  }
  std::vector<output::RequestRow> got;
  for (int rank = 0; rank < 2; ++rank) {
    for (const output::RequestRow& row :
         Rows(*shards[static_cast<std::size_t>(rank)], ledgers[static_cast<std::size_t>(rank)]))
      got.push_back(row);
  }
  std::sort(got.begin(), got.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  ASSERT_EQ(got.size(), expected.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    EXPECT_EQ(std::memcmp(&got[i], &expected[i], sizeof got[i]), 0) << "request " << got[i].id;
}

// Data-parallel expert-parallel groups are saved (engine/dp_engine.cc) since format 5.
TEST(CheckpointSupport, DataParallelGroupsAreCovered) {
  FleetSetup fleet;
  InstanceGroupConfig group;
  group.name = "moe";
  group.dp = 2;
  group.enable_expert_parallel = true;
  fleet.cluster.groups.push_back(group);
  fleet.groups.emplace_back();
  EXPECT_EQ(CheckpointRefusal(fleet), std::nullopt);
  EXPECT_TRUE(UncoveredFeatures().empty());
}

class ManifestTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (std::filesystem::temp_directory_path() /
            ("fleetsim-manifest-" + std::to_string(::getpid())))
               .string();
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void WriteManifest(const std::string& text) {
    std::ofstream(CheckpointManifestPath(dir_)) << text;
  }
  // The error reading the manifest gives, as one line.
  std::string ErrorOf() {
    try {
      ReadCheckpointManifest(dir_);
    } catch (const InputError& e) {
      return e.what();
    }
    return "no error";
  }
  std::string dir_;
};

TEST_F(ManifestTest, RoundTripsEveryField) {
  CheckpointManifest m;
  m.build = "1.2.3";
  m.inputs = 0x0123456789abcdefULL;
  m.sequence = 4;
  m.ranks = 2;
  m.window_end = 5'000'000'000;
  m.snapshot_epoch = 99;
  m.last_decision = 4'999'000'000;
  m.decisions = 1234;
  m.windows = 100;
  m.snapshots = 98;
  m.out_of_grid = 5;
  m.workload_taken = 1240;
  m.next_checkpoint = 6'000'000'000;
  m.files = {{10, 0xfeedULL}, {20, 0xbeefULL}};
  m.command_line = "fleetsim run --checkpoint c --checkpoint-every 1";
  WriteManifest(ManifestText(m));
  const CheckpointManifest back = ReadCheckpointManifest(dir_);
  EXPECT_EQ(ManifestText(back), ManifestText(m));
}

TEST_F(ManifestTest, MissingTruncatedOrForeignIsOneLocatedError) {
  EXPECT_NE(ErrorOf().find("manifest is missing"), std::string::npos) << ErrorOf();
  const std::string newer = std::to_string(kCheckpointFormat + 1);
  WriteManifest("fleetsim-checkpoint " + newer + "\n");
  EXPECT_NE(ErrorOf().find(":1: format: checkpoint format " + newer), std::string::npos)
      << ErrorOf();
  WriteManifest("hello\n");
  EXPECT_NE(ErrorOf().find("not a fleetsim checkpoint"), std::string::npos) << ErrorOf();
  CheckpointManifest m;
  m.ranks = 1;
  m.files = {{1, 2}};
  const std::string text = ManifestText(m);
  WriteManifest(text.substr(0, text.size() / 2));  // cut mid-line
  EXPECT_NE(ErrorOf().find("format: ends mid-line (truncated manifest?)"), std::string::npos)
      << ErrorOf();
  WriteManifest(text.substr(0, text.find("decisions")));  // cut at a line's end
  EXPECT_NE(ErrorOf().find("decisions: missing (truncated manifest?)"), std::string::npos)
      << ErrorOf();
  WriteManifest("fleetsim-checkpoint " + std::to_string(kCheckpointFormat) + "\nsequence x\n");
  EXPECT_NE(ErrorOf().find(":2: sequence: not an integer"), std::string::npos) << ErrorOf();
  for (const std::string& error : {ErrorOf()})
    EXPECT_EQ(error.find('\n'), std::string::npos);
}

}  // namespace
}  // namespace fleetsim
