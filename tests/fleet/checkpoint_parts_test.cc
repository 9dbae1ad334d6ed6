// Checkpoints of the fleet's parts (docs/CHECKPOINT.md): a router saved mid-run and loaded
// into one built alike picks exactly what the original picks from then on, under every
// policy form (views, snapshots, random streams, the weighted round-robin position);
// time-series sums and ledgers saved on several "ranks" and loaded on fewer add up to what
// one would hold; a manifest that is missing, truncated or of another format is one
// located InputError.
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

#include <gtest/gtest.h>

#include "core/checkpoint_io.h"
#include "core/input_error.h"
#include "core/random.h"
#include "fleet/checkpoint_files.h"
#include "fleet/checkpoint_support.h"
#include "fleet/router.h"
#include "fleet/timeseries.h"

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

TEST(CheckpointSupport, SpeculativeDecodingIsRefusedNamingTheGroup) {
  FleetSetup fleet;
  InstanceGroupConfig group;
  group.name = "drafty";
  fleet.cluster.groups.push_back(group);
  fleet.groups.emplace_back();
  EXPECT_EQ(CheckpointRefusal(fleet), std::nullopt);
  fleet.groups[0].engine.num_spec = 1;
  const std::optional<std::string> why = CheckpointRefusal(fleet);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("instance group drafty: speculative decoding"), std::string::npos) << *why;
}

TEST(CheckpointSupport, PrefillDecodeRolesAreRefusedNamingTheGroup) {
  FleetSetup fleet;
  for (const InstanceRole role : {InstanceRole::kMixed, InstanceRole::kPrefill}) {
    InstanceGroupConfig group;
    group.name = role == InstanceRole::kMixed ? "colocated" : "prompts";
    group.role = role;
    fleet.cluster.groups.push_back(group);
    fleet.groups.emplace_back();
  }
  const std::optional<std::string> why = CheckpointRefusal(fleet);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("instance group prompts: role prefill (prefill/decode disaggregation)"),
            std::string::npos)
      << *why;
  fleet.cluster.groups[1].role = InstanceRole::kDecode;
  ASSERT_TRUE(CheckpointRefusal(fleet).has_value());
  EXPECT_NE(CheckpointRefusal(fleet)->find("role decode"), std::string::npos);
  fleet.cluster.groups[1].role = InstanceRole::kMixed;
  EXPECT_EQ(CheckpointRefusal(fleet), std::nullopt);
}

TEST(CheckpointSupport, DataParallelGroupsAreRefusedNamingTheGroup) {
  FleetSetup fleet;
  InstanceGroupConfig group;
  group.name = "moe";
  fleet.cluster.groups.push_back(group);
  fleet.groups.emplace_back();
  EXPECT_EQ(CheckpointRefusal(fleet), std::nullopt);
  fleet.cluster.groups[0].dp = 2;
  fleet.cluster.groups[0].enable_expert_parallel = true;
  const std::optional<std::string> why = CheckpointRefusal(fleet);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("instance group moe: dp 2 (data parallelism with expert parallelism)"),
            std::string::npos)
      << *why;
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
