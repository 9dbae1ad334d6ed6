// The rooms of the fleet loop, each alone: the workload reader and its shipping, the
// gateway shard, the request ledger, the writer's counters and placement, and the
// instance shard on a bundle whose costs follow simple formulas (tests/perf).
#include <algorithm>
#include <cstring>
#include <deque>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>

#include <gtest/gtest.h>

#include "cluster/cluster_config.h"
#include "fleet/gateway_shard.h"
#include "fleet/instance_shard.h"
#include "fleet/request_ledger.h"
#include "fleet/run_writer.h"
#include "fleet/workload_reader.h"
#include "perf/synthetic_bundle.h"
#include "support/temp_file.h"
#include "workload/generator.h"

namespace fleetsim {
namespace {

// Requests at 0, 10, 20, ... ns.
class ListSource : public WorkloadSource {
 public:
  explicit ListSource(int n) {
    for (int i = 0; i < n; ++i) {
      WorkloadRequest r;
      r.id = "a" + std::to_string(i);
      r.arrival = 10 * i;
      r.input_tokens = 100 + i;
      r.output_tokens = 4;
      requests_.push_back(r);
    }
  }
  std::optional<WorkloadRequest> Next() override {
    if (next_ == requests_.size()) return std::nullopt;
    return requests_[next_++];
  }
  std::string format() const override { return "list"; }
  std::optional<int64_t> expected_requests() const override {
    return static_cast<int64_t>(requests_.size());
  }

 private:
  std::vector<WorkloadRequest> requests_;
  std::size_t next_ = 0;
};

TEST(WorkloadReader, NumbersRequestsByPositionAndPicksTheirGateway) {
  ListSource source(3);
  WorkloadReader reader(&source, 4);
  EXPECT_EQ(reader.expected(), 3);
  const RoutedRequest* first = reader.Peek();
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first, reader.Peek());  // peeking does not take
  EXPECT_EQ(first->id, 0);
  EXPECT_EQ(first->request.id, "a0");
  for (int64_t id = 0; id < 3; ++id) {
    ASSERT_NE(reader.Peek(), nullptr);
    const RoutedRequest r = reader.Take();
    EXPECT_EQ(r.id, id);
    EXPECT_EQ(r.gateway, GatewayOf(id, 4));
  }
  EXPECT_EQ(reader.Peek(), nullptr);
  EXPECT_TRUE(reader.exhausted());
  EXPECT_EQ(reader.made(), 3);
  EXPECT_EQ(reader.expected(), 3);
}

TEST(WorkloadReader, ShipsAWindowsArrivalsToTheirGatewaysRanks) {
  ListSource source(10);
  WorkloadReader reader(&source, 5);
  std::vector<std::vector<std::byte>> outgoing(3);
  std::deque<RoutedRequest> own;
  reader.ShipBefore(35, outgoing, own);  // arrivals 0, 10, 20, 30
  EXPECT_TRUE(outgoing[0].empty()) << "rank 0's own requests skip the wire form";
  std::set<int64_t> shipped;
  for (int rank = 0; rank < 3; ++rank) {
    int64_t last = -1;
    const std::vector<RoutedRequest> batch =
        rank == 0 ? std::vector<RoutedRequest>(own.begin(), own.end())
                  : ParseRoutedRequests(outgoing[static_cast<std::size_t>(rank)]);
    for (const RoutedRequest& r : batch) {
      EXPECT_EQ(RankOfGateway(r.gateway, 3), rank);
      EXPECT_EQ(r.gateway % 3, rank);
      EXPECT_GT(r.id, last) << "workload order within a rank's batch";
      last = r.id;
      shipped.insert(r.id);
    }
  }
  EXPECT_EQ(shipped, (std::set<int64_t>{0, 1, 2, 3}));
  ASSERT_NE(reader.Peek(), nullptr);
  EXPECT_EQ(reader.Peek()->id, 4);  // the first of the next window waits
}

TEST(WorkloadReader, AReaderlessRankReadsNothingAndAnAbandonedOneStops) {
  WorkloadReader none(nullptr, 2);
  EXPECT_EQ(none.Peek(), nullptr);
  EXPECT_EQ(none.made(), 0);
  ListSource source(5);
  WorkloadReader reader(&source, 2);
  ASSERT_NE(reader.Peek(), nullptr);
  reader.Abandon();
  EXPECT_EQ(reader.Peek(), nullptr);
  EXPECT_TRUE(reader.exhausted());
}

// Every rank reads its own copy of a generator of independent requests: each window,
// the ranks make between them exactly what one reader would ship to them, in the same
// order, each standing where one reader stands (one request past the last handed on,
// also a rank with no gateway), and a checkpoint's position (the least over the ranks)
// restarts at another rank count where the uninterrupted run would go on.
TEST(WorkloadReader, EveryRankMakesWhatOneReaderWouldShipItAndRestartsAtAnyRankCount) {
  testing::TempFile spec("g.yaml",
                         "generator:\n  seed: 8\n  num_requests: 600\n"
                         "  arrivals: {process: poisson, rate_per_s: 100}\n"
                         "  input_tokens: {distribution: uniform, min: 10, max: 300}\n"
                         "  output_tokens: {distribution: uniform, min: 1, max: 9}\n"
                         "  hash_block_size: 16\n");
  constexpr int kGateways = 5;
  const std::vector<SimTime> stops = {SecondsToSimTime(0.5), SecondsToSimTime(1.7),
                                      SecondsToSimTime(1.75), SecondsToSimTime(4),
                                      SecondsToSimTime(100)};
  const auto key = [](const RoutedRequest& r) {
    return std::make_tuple(r.id, r.gateway, r.request.id, r.request.arrival, r.request.input_tokens,
                           r.request.output_tokens, r.request.block_hashes);
  };
  using Key = decltype(key(RoutedRequest{}));
  for (int ranks : {1, 2, 3, 7}) {  // 7: more ranks than gateways
    // What one reader ships to each rank, window by window, and its position after each.
    auto one_source = OpenGeneratedWorkload(spec.path());
    WorkloadReader one(one_source.get(), kGateways);
    std::vector<std::vector<std::vector<Key>>> shipped;  // [window][rank]
    std::vector<int64_t> one_taken;
    for (SimTime stop : stops) {
      std::vector<std::vector<std::byte>> outgoing(static_cast<std::size_t>(ranks));
      std::deque<RoutedRequest> own;
      one.ShipBefore(stop, outgoing, own);
      shipped.emplace_back();
      for (std::size_t rank = 0; rank < outgoing.size(); ++rank) {
        shipped.back().emplace_back();
        for (const RoutedRequest& r : rank == 0 ? std::vector<RoutedRequest>(own.begin(), own.end())
                                                : ParseRoutedRequests(outgoing[rank]))
          shipped.back().back().push_back(key(r));
      }
      one_taken.push_back(one.taken());
    }
    EXPECT_EQ(one_taken.back(), 600);

    // The same run with every rank reading, stopped after `cut` windows and restarted at
    // `again` ranks from the least position (cut 5: never stopped).
    for (int cut : {5, 1, 3}) {
      for (int again : {1, 2, 3}) {
        if (cut == 5 && again != ranks) continue;
        std::vector<std::unique_ptr<WorkloadSource>> sources;
        std::vector<WorkloadReader> readers;
        auto start = [&](int count, int64_t skip) {
          sources.clear();
          readers.clear();
          for (int rank = 0; rank < count; ++rank) {
            sources.push_back(OpenGeneratedWorkload(spec.path()));
            readers.emplace_back(sources.back().get(), kGateways, rank, count);
            readers.back().SkipTo(skip);
          }
        };
        start(ranks, 0);
        int64_t made_before_cut = 0;
        for (std::size_t w = 0; w < stops.size(); ++w) {
          if (static_cast<int>(w) == cut) {
            int64_t taken = std::numeric_limits<int64_t>::max();
            for (const WorkloadReader& reader : readers)
              taken = std::min(taken, reader.taken());
            ASSERT_EQ(taken, one_taken[w - 1]) << ranks << " ranks, cut after window " << cut;
            start(again, taken);
            made_before_cut = 0;
            for (const WorkloadReader& reader : readers)
              made_before_cut += reader.made();
            EXPECT_EQ(made_before_cut, taken) << "skipped requests count as made";
          }
          const int count = static_cast<int>(readers.size());
          // One reader shipping to `count` ranks, for the windows after a restart.
          std::vector<std::vector<Key>> expected(static_cast<std::size_t>(count));
          for (const std::vector<Key>& batch : shipped[w]) {
            for (const Key& k : batch)
              expected[static_cast<std::size_t>(RankOfGateway(std::get<1>(k), count))].push_back(k);
          }
          for (std::vector<Key>& batch : expected)
            std::sort(batch.begin(), batch.end());  // ids ascend: workload order
          for (int rank = 0; rank < count; ++rank) {
            std::deque<RoutedRequest> inbox;
            readers[static_cast<std::size_t>(rank)].TakeBefore(stops[w], inbox);
            std::vector<Key> got;
            for (const RoutedRequest& r : inbox)
              got.push_back(key(r));
            EXPECT_EQ(got, expected[static_cast<std::size_t>(rank)])
                << ranks << " ranks, cut " << cut << ", again " << again << ", window " << w
                << ", rank " << rank;
            EXPECT_EQ(readers[static_cast<std::size_t>(rank)].taken(), one_taken[w])
                << "read no further than one reader: " << ranks << " ranks, window " << w
                << ", rank " << rank;
          }
        }
        int64_t made = 0;
        for (WorkloadReader& reader : readers) {
          EXPECT_EQ(reader.Peek(), nullptr);
          EXPECT_TRUE(reader.exhausted());
          EXPECT_EQ(reader.taken(), 600);
          made += reader.made();
        }
        EXPECT_EQ(made, 600) << "every request made once, by its gateway's rank";
      }
    }
  }
}

TEST(WorkloadReader, EveryRankReadsOnlyFromASourceThatCanPassOver) {
  ListSource list(3);
  EXPECT_THROW(WorkloadReader(&list, 2, 0, 2), std::logic_error);
  EXPECT_THROW(WorkloadReader(nullptr, 2, 0, 2), std::logic_error);
  EXPECT_EQ(WorkloadReader(nullptr, 2).taken(), std::numeric_limits<int64_t>::max())
      << "a rank that reads nothing does not bound the position";
}

// `n` instances of one model.
RoutingTable Targets(int n) {
  RoutingTable table;
  table.models = {"m"};
  for (int32_t i = 0; i < n; ++i) {
    table.targets.push_back({i, 100.0 * (1 + i % 2), 1000, 16});
    table.model_of_target.push_back(0);
  }
  return table;
}

GatewaysConfig Gateways(int count, RoutingPolicy policy) {
  GatewaysConfig config;
  config.count = count;
  config.router.policy = policy;
  return config;
}

RoutedRequest At(int32_t gateway, int64_t id) {
  RoutedRequest r;
  r.id = id;
  r.gateway = gateway;
  r.request.input_tokens = 100;
  return r;
}

TEST(GatewayShard, HoldsTheGatewaysOfItsRank) {
  const GatewaysConfig config = Gateways(5, RoutingPolicy::kRoundRobin);
  EXPECT_EQ(GatewayShard(config, Targets(3), 1, 0, 2).size(), 3u);  // 0, 2, 4
  GatewayShard odd(config, Targets(3), 1, 1, 2);                    // 1, 3
  EXPECT_EQ(odd.size(), 2u);
  EXPECT_THROW(odd.Route(At(2, 0)), std::logic_error);
  // Round robin over the three instances, in id order, per gateway.
  std::vector<int32_t> chosen;
  for (int64_t i = 0; i < 4; ++i)
    chosen.push_back(odd.Route(At(3, i)));
  EXPECT_EQ(chosen, (std::vector<int32_t>{0, 1, 2, 0}));
  EXPECT_EQ(odd.Route(At(1, 9)), 0);  // gateway 1 keeps its own turn
}

TEST(GatewayShard, UsesLoadIsThePolicys) {
  EXPECT_FALSE(
      GatewayShard(Gateways(1, RoutingPolicy::kRoundRobin), Targets(2), 0, 0, 1).uses_load());
  EXPECT_FALSE(GatewayShard(Gateways(1, RoutingPolicy::kRandom), Targets(2), 0, 0, 1).uses_load());
  for (RoutingPolicy p : {RoutingPolicy::kLeastOutstanding, RoutingPolicy::kLeastKv,
                          RoutingPolicy::kPowerOfTwo, RoutingPolicy::kPrefixAffinity})
    EXPECT_TRUE(GatewayShard(Gateways(1, p), Targets(2), 0, 0, 1).uses_load());
}

std::vector<int32_t> Draws(GatewayShard& shard, int32_t gateway, int n) {
  std::vector<int32_t> out;
  for (int64_t i = 0; i < n; ++i)
    out.push_back(shard.Route(At(gateway, i)));
  return out;
}

TEST(GatewayShard, AGatewaysStreamIsItsOwnWhicheverRankHoldsIt) {
  const GatewaysConfig config = Gateways(4, RoutingPolicy::kRandom);
  GatewayShard alone(config, Targets(16), 77, 0, 1);
  GatewayShard split(config, Targets(16), 77, 1, 2);  // holds gateways 1 and 3
  const std::vector<int32_t> three = Draws(alone, 3, 64);
  EXPECT_EQ(Draws(split, 3, 64), three);
  // Another gateway, or another seed, draws another sequence.
  EXPECT_NE(Draws(alone, 1, 64), three);
  GatewayShard reseeded(config, Targets(16), 78, 0, 1);
  EXPECT_NE(Draws(reseeded, 3, 64), three);
}

TEST(GatewayShard, StreamSeedsDifferByGatewayAndRunSeed) {
  std::set<uint64_t> seeds;
  for (uint64_t seed : {uint64_t{0}, uint64_t{1}, uint64_t{5}})
    for (int32_t g = 0; g < 100; ++g)
      seeds.insert(StreamSeedOfGateway(seed, g));
  EXPECT_EQ(seeds.size(), 300u);
  EXPECT_EQ(StreamSeedOfGateway(5, 7), StreamSeedOfGateway(5, 7));
}

// Instances 0 and 1 serve "a", instance 2 serves "b".
RoutingTable TwoModels() {
  RoutingTable table;
  table.models = {"a", "b"};
  for (int32_t i = 0; i < 3; ++i) {
    table.targets.push_back({i, 100.0, 1000, 16});
    table.model_of_target.push_back(i < 2 ? 0 : 1);
  }
  return table;
}

RoutedRequest For(const std::string& model, int64_t id) {
  RoutedRequest r = At(0, id);
  r.request.model = model;
  return r;
}

TEST(GatewayShard, ARequestGoesOnlyToTheGroupsServingItsModel) {
  GatewayShard shard(Gateways(1, RoutingPolicy::kRoundRobin), TwoModels(), 1, 0, 1);
  // Each model's round robin over its own instances; model-less requests over all three,
  // with their own turn; a model no group serves is not routed.
  std::vector<int32_t> chosen;
  int64_t id = 0;
  for (const char* model : {"a", "a", "b", "", "b", "a", "", "gpt-x", "a"})
    chosen.push_back(shard.Route(For(model, id++)));
  EXPECT_EQ(chosen, (std::vector<int32_t>{0, 1, 2, 0, 2, 0, 1, GatewayShard::kNoInstance, 1}));
}

TEST(GatewayShard, AGatewayKeepsOneViewWhicheverRouterDecided) {
  GatewayShard shard(Gateways(1, RoutingPolicy::kLeastOutstanding), TwoModels(), 1, 0, 1);
  shard.Apply({});  // the first snapshot: nothing changed
  EXPECT_EQ(shard.Route(For("a", 0)), 0);
  EXPECT_EQ(shard.Route(For("a", 1)), 1);
  // The fleet-wide router saw both: the least loaded is 2, not 0.
  EXPECT_EQ(shard.Route(For("", 2)), 2);
  // "b"'s router saw the model-less request on 2: still its only choice, now at 2.
  EXPECT_EQ(shard.Route(For("b", 3)), 2);
  // Loads 1, 1, 2: the lowest id of the least loaded.
  EXPECT_EQ(shard.Route(For("", 4)), 0);
  // "a"'s router saw that one on 0: loads 2, 1 within "a".
  EXPECT_EQ(shard.Route(For("a", 5)), 1);
}

TEST(GatewayShard, AModelServedByEveryInstanceSharesTheFleetsRouter) {
  RoutingTable one = Targets(4);
  GatewayShard shard(Gateways(1, RoutingPolicy::kRandom), one, 9, 0, 1);
  GatewayShard same(Gateways(1, RoutingPolicy::kRandom), one, 9, 0, 1);
  // Requests for "m" (every instance's model) draw from the stream model-less ones do.
  for (int64_t i = 0; i < 32; ++i)
    EXPECT_EQ(shard.Route(For(i % 2 ? "m" : "", i)), same.Route(At(0, i))) << i;
}

// Instances 0-1 prefill on nodes 0 and 1; 2-5 decode, two per node (2, 3 on node 0).
RoutingTable PrefillDecodeOnTwoNodes() {
  RoutingTable table;
  table.models = {"m"};
  for (int32_t i = 0; i < 6; ++i) {
    table.targets.push_back({i, 100.0, 1000, 16});
    table.model_of_target.push_back(0);
    table.role_of_target.push_back(i < 2 ? InstanceRole::kPrefill : InstanceRole::kDecode);
    table.node_of_target.push_back(i < 2 ? "0:" + std::to_string(i) : i < 4 ? "0:0" : "0:1");
  }
  return table;
}

TEST(GatewayShard, DecodeScopeNodeKeepsTheDecodeInstanceOnThePrefillInstancesNode) {
  GatewaysConfig config = Gateways(1, RoutingPolicy::kRoundRobin);
  config.decode_policy = RoutingPolicy::kRoundRobin;
  GatewayShard fleet(config, PrefillDecodeOnTwoNodes(), 3, 0, 1);
  config.decode_on_same_node = true;
  GatewayShard node(config, PrefillDecodeOnTwoNodes(), 3, 0, 1);
  std::vector<int32_t> anywhere, local;
  for (int64_t i = 0; i < 8; ++i) {
    const RoutedRequest r = At(0, i);
    const int32_t p = static_cast<int32_t>(i % 2);
    anywhere.push_back(fleet.RouteDecode(r, p));
    local.push_back(node.RouteDecode(r, p));
  }
  // Fleet scope: one round robin over all four decode instances, whatever the prefill's
  // node; node scope: each node's own round robin over its two.
  EXPECT_EQ(anywhere, (std::vector<int32_t>{2, 3, 4, 5, 2, 3, 4, 5}));
  EXPECT_EQ(local, (std::vector<int32_t>{2, 4, 3, 5, 2, 4, 3, 5}));
  EXPECT_EQ(node.RouteDecode(At(0, 9), 3), GatewayShard::kNoInstance);  // not a prefill
  RoutingTable unplaced = PrefillDecodeOnTwoNodes();
  unplaced.node_of_target.clear();
  EXPECT_THROW(GatewayShard(config, unplaced, 3, 0, 1), std::invalid_argument);
}

TEST(GatewayShard, EachModelsRouterHasItsOwnStream) {
  std::set<uint64_t> seeds = {StreamSeedOfGateway(5, 0), StreamSeedOfGateway(5, 0, "a"),
                              StreamSeedOfGateway(5, 0, "b"), StreamSeedOfGateway(5, 1, "a"),
                              StreamSeedOfGateway(6, 0, "a")};
  EXPECT_EQ(seeds.size(), 5u);
  EXPECT_EQ(StreamSeedOfGateway(5, 0, "a"), StreamSeedOfGateway(5, 0, "a"));
}

output::RequestRow Row(int64_t id, const char* state) {
  output::RequestRow row{};
  row.id = id;
  row.arrival_ns = id * 1'000'000;
  row.finish_ns = row.arrival_ns + 500'000'000;
  row.ttft_s = 0.1;
  row.tpot_s = 0.01;
  row.e2e_s = 0.5;
  row.output_tokens = 10;
  output::CopyName(row.state, state);
  return row;
}

ClusterConfig TwoGroups() {
  ClusterConfig cluster;
  cluster.groups.resize(2);
  cluster.groups[0].name = "h100";
  cluster.groups[1].name = "a100";
  return cluster;
}
const std::vector<std::string> kOneModel = {"llama-3.1-8b"};
const std::vector<int32_t> kBothServeIt = {0, 0};

TEST(RequestLedger, SumsEachRequestIntoItsGroupAndTheFleet) {
  RequestLedger ledger(TwoGroups(), kOneModel, kBothServeIt, true);
  ledger.Add(Row(0, "finished"), 0);
  ledger.Add(Row(1, "finished"), 0);
  ledger.Add(Row(2, "rejected"), 1);
  ledger.Add(Row(3, "unfinished"), -1);  // never reached an instance: the fleet's only
  EXPECT_EQ(ledger.settled(), 4);
  EXPECT_EQ(ledger.rows().size(), 4u);
  const std::vector<output::SummaryRow> rows = ledger.Summaries(MPI_COMM_SELF);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_STREQ(rows[0].group, "h100");
  EXPECT_EQ(rows[0].requests, 2);
  EXPECT_EQ(rows[0].finished, 2);
  EXPECT_STREQ(rows[1].group, "a100");
  EXPECT_EQ(rows[1].rejected, 1);
  EXPECT_STREQ(rows[2].group, "fleet");
  EXPECT_EQ(rows[2].requests, 4);
  EXPECT_EQ(rows[2].finished, 2);
  EXPECT_EQ(rows[2].rejected, 1);
  EXPECT_EQ(rows[2].unfinished, 1);
}

TEST(RequestLedger, AMultiModelFleetHasARowPerModel) {
  ClusterConfig cluster;
  cluster.groups.resize(3);
  cluster.groups[0].name = "big";
  cluster.groups[1].name = "small-h100";
  cluster.groups[2].name = "small-a100";
  RequestLedger ledger(cluster, {"llama-3.1-70b", "llama-3.1-8b"}, {0, 1, 1}, true);
  ledger.Add(Row(0, "finished"), 0);
  ledger.Add(Row(1, "finished"), 1);
  ledger.Add(Row(2, "finished"), 2);
  ledger.Add(Row(3, "rejected"), 2);
  WorkloadRequest unserved;
  unserved.model = "gpt-x";
  unserved.arrival = 5'000'000;
  unserved.input_tokens = 10;
  const output::RequestRow no_model = NoModelRowOf(unserved, 4, 1);
  EXPECT_STREQ(no_model.state, "rejected");
  EXPECT_STREQ(no_model.reason, "no_model");
  EXPECT_EQ(no_model.instance, -1);
  EXPECT_EQ(no_model.gateway, 1);
  EXPECT_EQ(no_model.arrival_ns, 5'000'000);
  EXPECT_EQ(no_model.finish_ns, -1);
  ledger.Add(no_model, -1);
  const std::vector<output::SummaryRow> rows = ledger.Summaries(MPI_COMM_SELF);
  ASSERT_EQ(rows.size(), 6u);
  EXPECT_STREQ(rows[3].group, "model:llama-3.1-70b");
  EXPECT_EQ(rows[3].requests, 1);
  EXPECT_STREQ(rows[4].group, "model:llama-3.1-8b");
  EXPECT_EQ(rows[4].requests, 3);
  EXPECT_EQ(rows[4].finished, 2);
  EXPECT_EQ(rows[4].rejected, 1);
  EXPECT_STREQ(rows[5].group, "fleet");
  EXPECT_EQ(rows[5].requests, 5);
  EXPECT_EQ(rows[5].rejected, 2);  // the engine's, and no_model
}

TEST(RequestLedger, ADisaggregatedRequestCountsInItsPrefillGroupAndOnceInTheFleet) {
  ClusterConfig cluster;
  cluster.groups.resize(3);
  cluster.groups[0].name = "prefill";
  cluster.groups[1].name = "decode";
  cluster.groups[2].name = "mixed";
  RequestLedger ledger(cluster, kOneModel, {0, 0, 0}, true);
  ledger.Add(Row(0, "finished"), 1, 0);    // prefilled by group 0, decoded by group 1
  ledger.Add(Row(1, "unfinished"), 1, 0);  // handed over, not done at the horizon
  ledger.Add(Row(2, "rejected"), 0);       // the prefill instance refused it
  ledger.Add(Row(3, "finished"), 2);       // served whole
  ledger.Add(Row(4, "finished"), 2, 2);    // a group is never counted twice
  const std::vector<output::SummaryRow> rows = ledger.Summaries(MPI_COMM_SELF);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_STREQ(rows[0].group, "prefill");
  EXPECT_EQ(rows[0].requests, 3);
  EXPECT_EQ(rows[0].finished, 1);
  EXPECT_EQ(rows[0].unfinished, 1);
  EXPECT_EQ(rows[0].rejected, 1);
  EXPECT_DOUBLE_EQ(rows[0].ttft_p50_s, rows[1].ttft_p50_s);  // the request's own TTFT
  EXPECT_STREQ(rows[1].group, "decode");
  EXPECT_EQ(rows[1].requests, 2);
  EXPECT_EQ(rows[1].finished, 1);
  EXPECT_EQ(rows[2].requests, 2);
  EXPECT_STREQ(rows[3].group, "fleet");
  EXPECT_EQ(rows[3].requests, 5);
  EXPECT_EQ(rows[3].finished, 3);
  EXPECT_EQ(ledger.settled(), 5);
}

TEST(RequestLedger, WithoutRowsItStillCounts) {
  RequestLedger ledger(TwoGroups(), kOneModel, kBothServeIt, false);
  ledger.Add(Row(0, "finished"), 1);
  EXPECT_EQ(ledger.settled(), 1);
  EXPECT_TRUE(ledger.rows().empty());
}

TEST(RunWriter, SetupLookupsCountOnceRankLookupsAdd) {
  const RankCounters run = SumOverRanks({3, 40, 7, 5}, 10, MPI_COMM_SELF);
  EXPECT_EQ(run.requests_read, 3);
  EXPECT_EQ(run.steps, 40);
  EXPECT_EQ(run.gateway_decisions, 7);
  EXPECT_EQ(run.out_of_grid, 15);
}

TEST(RunWriter, PlacementNamesEachRanksInstances) {
  EXPECT_EQ(PlacementText({0, 0, 1, 1, 1}, 2, 1), "rank 0: 0-1 | rank 1: 2-4 (a rank per process)");
  EXPECT_EQ(PlacementText({0, 1, 0, 3}, 4, 2),
            "rank 0: 0 2 | rank 1: 1 | rank 2: | rank 3: 3 (2 threads per process, each a rank: "
            "rank r is thread r mod 2 of process r / 2)");
  // The partition's round robin, in a line.
  std::vector<int32_t> alternating(20000);
  for (std::size_t i = 0; i < alternating.size(); ++i)
    alternating[i] = static_cast<int32_t>(i % 2);
  EXPECT_EQ(PlacementText(alternating, 2, 1),
            "instance i on rank i mod 2, instances 0-19999 (a rank per process)");
  // Too fragmented for an attribute: instances per rank.
  std::vector<int32_t> threes(20000);
  for (std::size_t i = 0; i < threes.size(); ++i)
    threes[i] = static_cast<int32_t>(i / 3 % 2);
  EXPECT_EQ(PlacementText(threes, 2, 1), "instances per rank: 10001 9999");
}

TEST(FleetSetup, PartitionDealsInstancesToRanksInTurn) {
  // Instances are numbered by group: a round robin gives every rank an equal share (to
  // one) of each group, and the low ids that ties favour go to different ranks.
  FleetSetup fleet;
  for (int32_t i = 0; i < 7; ++i)
    fleet.instances.push_back({i, i < 3 ? 0 : 1, {}, 1.0});
  EXPECT_EQ(fleet.Partition(1), (std::vector<int32_t>{0, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(fleet.Partition(2), (std::vector<int32_t>{0, 1, 0, 1, 0, 1, 0}));
  EXPECT_EQ(fleet.Partition(3), (std::vector<int32_t>{0, 1, 2, 0, 1, 2, 0}));
}

// Four Llama-3.1-8B instances on the synthetic dense bundle.
class InstanceShardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::WriteDenseBundle(bundle_);
    config_ = std::make_unique<testing::TempFile>(
        "fleet.yaml",
        "instance_groups:\n"
        "  - {name: g, model: llama-3.1-8b, hardware: H100-SXM, tp: 1, replicas: 4,\n"
        "     bundle: " +
            bundle_.dir() +
            ", engine: {num_gpu_blocks: 400}}\n"
            "gateways: {count: 2, policy: round_robin}\n");
    fleet_ = std::make_unique<FleetSetup>(
        BuildFleetSetup(LoadClusterConfig(config_->path()),
                        [](const ModelCard&, const HardwareSpec&,
                           const EngineConfig&) -> std::string { throw std::logic_error(""); }));
  }

  // 40 requests, request k to instance k mod 4, 2 ms apart at the instances.
  static std::vector<RoutedRequest> Requests() {
    std::vector<RoutedRequest> out;
    for (int64_t k = 0; k < 40; ++k) {
      RoutedRequest r;
      r.id = k;
      r.gateway = GatewayOf(k, 2);
      r.instance = static_cast<int32_t>(k % 4);
      r.instance_arrival = 500'000 + 2'000'000 * k;
      r.request.id = "r" + std::to_string(k);
      r.request.arrival = 2'000'000 * k;
      r.request.input_tokens = 300 + 7 * k;
      r.request.output_tokens = 5 + k % 9;
      out.push_back(r);
    }
    return out;
  }

  // Every row a shard run leaves, by id.
  static std::map<int64_t, output::RequestRow> ById(const RequestLedger& ledger) {
    std::map<int64_t, output::RequestRow> rows;
    for (const output::RequestRow& row : ledger.rows())
      EXPECT_TRUE(rows.emplace(row.id, row).second) << "request " << row.id << " twice";
    return rows;
  }

  testing::SyntheticBundle bundle_;
  std::unique_ptr<testing::TempFile> config_;
  std::unique_ptr<FleetSetup> fleet_;
};

TEST_F(InstanceShardTest, ArrivalsInAnyOrderAndAnyWindowsGiveTheSameRows) {
  const WindowClock clock(500'000, 0.05);
  // One shard, the requests in order, one long window.
  InstanceShard whole(*fleet_, fleet_->Partition(1), 0, {});
  RequestLedger once(fleet_->cluster, fleet_->models, fleet_->model_of_group, true);
  whole.Deliver(Requests());
  const std::vector<LoadChange> delivered = whole.TakeLoadChanges();
  ASSERT_EQ(delivered.size(), 4u);
  for (std::size_t i = 0; i < delivered.size(); ++i) {
    EXPECT_EQ(delivered[i].instance, static_cast<int32_t>(i));
    EXPECT_EQ(delivered[i].load.outstanding, 10);  // handed over, not yet served
    EXPECT_EQ(delivered[i].load.kv_used_blocks, 0);
  }
  EXPECT_TRUE(whole.TakeLoadChanges().empty());  // nothing happened since
  whole.Advance(0, 1'000'000'000'000, clock, once);
  const std::vector<LoadChange> served = whole.TakeLoadChanges();
  ASSERT_EQ(served.size(), 4u);  // every instance went from 10 requests to none
  for (const LoadChange& change : served)
    EXPECT_EQ(change.load.outstanding, 0) << change.instance;
  whole.Finish(once);
  const std::map<int64_t, output::RequestRow> expected = ById(once);
  ASSERT_EQ(expected.size(), 40u);
  for (const auto& [id, row] : expected)
    EXPECT_STREQ(row.state, "finished") << id;

  // The same requests delivered backwards, advanced in 50 ms windows.
  std::vector<RoutedRequest> reversed = Requests();
  std::reverse(reversed.begin(), reversed.end());
  InstanceShard windowed(*fleet_, fleet_->Partition(1), 0, {});
  RequestLedger many(fleet_->cluster, fleet_->models, fleet_->model_of_group, true);
  windowed.Deliver(std::move(reversed));
  SimTime end = 0;
  for (SimTime t = 0; windowed.NextEvent() != kNever; t = end) {
    end = clock.WindowAt(std::max(t, windowed.NextEvent()), t).end;
    windowed.Advance(t, end, clock, many);
  }
  windowed.Finish(many);
  const std::map<int64_t, output::RequestRow> got = ById(many);
  ASSERT_EQ(got.size(), expected.size());
  for (const auto& [id, row] : expected)
    EXPECT_EQ(std::memcmp(&got.at(id), &row, sizeof row), 0) << "request " << id;
  EXPECT_EQ(windowed.steps(), whole.steps());
}

TEST_F(InstanceShardTest, TwoRanksSplitTheInstancesAndTogetherGiveTheSameRows) {
  const WindowClock clock(500'000, 0.05);
  InstanceShard whole(*fleet_, fleet_->Partition(1), 0, {});
  RequestLedger all(fleet_->cluster, fleet_->models, fleet_->model_of_group, true);
  whole.Deliver(Requests());
  whole.Advance(0, 1'000'000'000'000, clock, all);
  whole.Finish(all);
  const std::map<int64_t, output::RequestRow> expected = ById(all);

  std::map<int64_t, output::RequestRow> joined;
  int64_t instances = 0;
  for (int rank = 0; rank < 2; ++rank) {
    InstanceShard half(*fleet_, fleet_->Partition(2), rank, {});
    RequestLedger ledger(fleet_->cluster, fleet_->models, fleet_->model_of_group, true);
    std::vector<RoutedRequest> mine;
    for (const RoutedRequest& r : Requests())
      if (half.owner_of()[static_cast<std::size_t>(r.instance)] == rank) mine.push_back(r);
    half.Deliver(std::move(mine));
    half.Advance(0, 1'000'000'000'000, clock, ledger);
    half.Finish(ledger);
    instances += static_cast<int64_t>(half.InstanceRows().size());
    for (const auto& [id, row] : ById(ledger))
      EXPECT_TRUE(joined.emplace(id, row).second);
  }
  EXPECT_EQ(instances, 4);
  ASSERT_EQ(joined.size(), expected.size());
  for (const auto& [id, row] : expected)
    EXPECT_EQ(std::memcmp(&joined.at(id), &row, sizeof row), 0) << "request " << id;
}

TEST_F(InstanceShardTest, AtTheHorizonWhatIsLeftEndsUnfinishedOnce) {
  const WindowClock clock(500'000, 0.05);
  InstanceShard shard(*fleet_, fleet_->Partition(1), 0, {});
  RequestLedger ledger(fleet_->cluster, fleet_->models, fleet_->model_of_group, true);
  shard.Deliver(Requests());
  shard.Advance(0, 20'000'000, clock, ledger);  // stop after 20 ms
  shard.Finish(ledger);
  const std::map<int64_t, output::RequestRow> rows = ById(ledger);
  EXPECT_EQ(rows.size(), 40u);
  EXPECT_STREQ(rows.at(39).state, "unfinished");
  EXPECT_EQ(ledger.settled(), 40);
}

}  // namespace
}  // namespace fleetsim
