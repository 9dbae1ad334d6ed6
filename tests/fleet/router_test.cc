#include "fleet/router.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <set>
#include <stdexcept>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "core/random.h"
#include "fleet/router_ring.h"
#include "fleet/router_swrr.h"
#include "fleet/router_view.h"

namespace fleetsim {
namespace {

RouterConfig Config(RoutingPolicy policy, bool weighted = false) {
  RouterConfig config;
  config.policy = policy;
  config.capacity_weighted = weighted;
  return config;
}

// Targets with ids 0..n-1 and the given capacities.
std::vector<RouteTarget> Targets(const std::vector<double>& capacities) {
  std::vector<RouteTarget> targets;
  for (size_t i = 0; i < capacities.size(); ++i)
    targets.push_back({static_cast<int32_t>(i), capacities[i], 1000, 16});
  return targets;
}

std::vector<InstanceLoad> Outstanding(const std::vector<int32_t>& outstanding) {
  std::vector<InstanceLoad> loads;
  for (int32_t o : outstanding)
    loads.push_back({o, 0});
  return loads;
}

std::vector<int32_t> RouteMany(Router& router, int count, RouteRequest request = {}) {
  std::vector<int32_t> chosen;
  for (int i = 0; i < count; ++i)
    chosen.push_back(router.Route(request));
  return chosen;
}

uint64_t Below(Rng& rng, uint64_t bound) {
  return rng.NextU64() % bound;  // test data only: the bias is irrelevant
}

// nginx's O(n) scan, the reference for smooth weighted round robin.
std::vector<int32_t> NginxSequence(const std::vector<int64_t>& weights, int picks) {
  int64_t total = 0;
  for (int64_t w : weights)
    total += w;
  std::vector<int64_t> current(weights.size(), 0);
  std::vector<int32_t> sequence;
  for (int p = 0; p < picks; ++p) {
    size_t best = 0;
    for (size_t i = 0; i < weights.size(); ++i) {
      current[i] += weights[i];
      if (current[i] > current[best]) best = i;
    }
    current[best] -= total;
    sequence.push_back(static_cast<int32_t>(best));
  }
  return sequence;
}

// ---- PrefixKey --------------------------------------------------------------------------

TEST(PrefixKey, CombinesTheFirstBlocksInOrder) {
  const std::vector<uint64_t> hashes = {11, 22, 33, 44, 55};
  EXPECT_FALSE(PrefixKey({}, 4).has_value());
  EXPECT_FALSE(PrefixKey(hashes, 0).has_value());
  EXPECT_FALSE(PrefixKey(hashes, -1).has_value());
  const std::vector<uint64_t> other_tail = {11, 22, 33, 44, 99};
  EXPECT_EQ(PrefixKey(hashes, 4), PrefixKey(other_tail, 4));  // block 5 is not part of it
  EXPECT_NE(PrefixKey(hashes, 5), PrefixKey(other_tail, 5));
  const std::vector<uint64_t> swapped = {22, 11, 33, 44};
  EXPECT_NE(PrefixKey(hashes, 4), PrefixKey(swapped, 4));  // order matters
  EXPECT_EQ(PrefixKey(hashes, 9), PrefixKey(hashes, 5));   // fewer blocks than asked: all
  EXPECT_NE(PrefixKey(hashes, 1), PrefixKey(hashes, 2));
}

// ---- round_robin ------------------------------------------------------------------------

TEST(RoundRobin, CyclesInInstanceIdOrderWhateverTheLoad) {
  std::vector<RouteTarget> targets = {{7, 1.0, 1000, 16}, {2, 5.0, 1000, 16}, {5, 1.0, 1000, 16}};
  Router router(Config(RoutingPolicy::kRoundRobin), targets, 1);
  std::vector<InstanceLoad> loads(8);
  loads[2].outstanding = 100;
  router.Refresh(loads);
  EXPECT_EQ(RouteMany(router, 7), (std::vector<int32_t>{2, 5, 7, 2, 5, 7, 2}));
  router.Refresh(loads);  // the position is not part of the view
  EXPECT_EQ(router.Route({}), 5);
}

TEST(RoundRobin, WeightedIsNginxSmoothOrderWithExactShares) {
  Router router(Config(RoutingPolicy::kRoundRobin, true), Targets({1.0, 2.0, 3.0}), 1);
  const std::vector<int32_t> cycle = {2, 1, 0, 2, 1, 2};  // hand-run nginx with weights 1:2:3
  for (int round = 0; round < 5; ++round)
    EXPECT_EQ(RouteMany(router, 6), cycle) << round;
}

TEST(RoundRobin, WeightedWithEqualCapacitiesIsPlainRoundRobin) {
  Router router(Config(RoutingPolicy::kRoundRobin, true), Targets({2.5, 2.5, 2.5, 2.5}), 1);
  EXPECT_EQ(RouteMany(router, 6), (std::vector<int32_t>{0, 1, 2, 3, 0, 1}));
}

TEST(RoundRobin, WeightedMatchesNginxScanOverManyCycles) {
  // Capacities from a few values, weights round(capacity / min x 1000): every cycle gives
  // each target exactly its weight's share.
  const std::vector<double> kinds = {0.8, 1.0, 1.2, 2.0, 3.4};
  Rng rng(42);
  std::vector<double> capacities;
  std::vector<int64_t> weights;
  for (int i = 0; i < 40; ++i)
    capacities.push_back(kinds[Below(rng, kinds.size())]);
  const double min_capacity = *std::min_element(capacities.begin(), capacities.end());
  int64_t total = 0;
  for (double c : capacities) {
    weights.push_back(std::llround(c / min_capacity * 1000.0));
    total += weights.back() / 50;  // every weight here is a multiple of 50
  }
  const int picks = static_cast<int>(total) * 7;
  Router router(Config(RoutingPolicy::kRoundRobin, true), Targets(capacities), 1);
  const std::vector<int32_t> got = RouteMany(router, picks);
  EXPECT_EQ(got, NginxSequence(weights, picks));
  std::vector<int64_t> count(capacities.size(), 0);
  for (int p = 0; p < static_cast<int>(total); ++p)
    ++count[static_cast<size_t>(got[static_cast<size_t>(p)])];
  for (size_t i = 0; i < weights.size(); ++i)
    EXPECT_EQ(count[i], weights[i] / 50) << i;
}

TEST(SmoothWeightedRoundRobin, MatchesNginxScanForIrregularWeights) {
  Rng rng(7);
  for (int n : {1, 2, 3, 17, 200}) {
    std::vector<uint64_t> weights;
    std::vector<int64_t> reference;
    for (int i = 0; i < n; ++i) {
      weights.push_back(1 + Below(rng, i % 3 == 0 ? 1000000 : 300));
      reference.push_back(static_cast<int64_t>(weights.back()));
    }
    router_internal::SmoothWeightedRoundRobin wrr(weights);
    const int picks = 40000;
    std::vector<int32_t> got;
    for (int p = 0; p < picks; ++p)
      got.push_back(wrr.Next());
    EXPECT_EQ(got, NginxSequence(reference, picks)) << "n=" << n;
  }
  // Small weights: exact ties between items growing at different rates are common, and the
  // lower index must take them at the very step they tie.
  for (int trial = 0; trial < 300; ++trial) {
    const auto n = static_cast<int>(2 + Below(rng, 7));
    std::vector<uint64_t> weights;
    std::vector<int64_t> reference;
    for (int i = 0; i < n; ++i) {
      weights.push_back(1 + Below(rng, 4));
      reference.push_back(static_cast<int64_t>(weights.back()));
    }
    router_internal::SmoothWeightedRoundRobin wrr(weights);
    std::vector<int32_t> got;
    for (int p = 0; p < 100; ++p)
      got.push_back(wrr.Next());
    ASSERT_EQ(got, NginxSequence(reference, 100)) << "trial " << trial;
  }
  // Small totals: many whole cycles, each one re-based.
  router_internal::SmoothWeightedRoundRobin wrr({5, 1, 3, 3, 7});
  std::vector<int32_t> got;
  for (int p = 0; p < 19 * 50; ++p)
    got.push_back(wrr.Next());
  EXPECT_EQ(got, NginxSequence({5, 1, 3, 3, 7}, 19 * 50));
}

// ---- random -----------------------------------------------------------------------------

TEST(RandomRouter, UniformAndCapacityWeightedShares) {
  const int draws = 60000;
  Router uniform(Config(RoutingPolicy::kRandom), Targets({1.0, 2.0, 3.0}), 2024);
  Router weighted(Config(RoutingPolicy::kRandom, true), Targets({1.0, 2.0, 3.0}), 2024);
  std::vector<int> uniform_count(3, 0);
  std::vector<int> weighted_count(3, 0);
  for (int i = 0; i < draws; ++i) {
    ++uniform_count[static_cast<size_t>(uniform.Route({}))];
    ++weighted_count[static_cast<size_t>(weighted.Route({}))];
  }
  for (size_t i = 0; i < 3; ++i) {
    // One standard deviation is under 0.002 here.
    EXPECT_NEAR(uniform_count[i] / double{draws}, 1.0 / 3.0, 0.01) << i;
    EXPECT_NEAR(weighted_count[i] / double{draws}, static_cast<double>(i + 1) / 6.0, 0.01) << i;
  }
}

TEST(RandomRouter, SameSeedSameChoicesOtherSeedOtherChoices) {
  for (RoutingPolicy policy : {RoutingPolicy::kRandom, RoutingPolicy::kPowerOfTwo}) {
    for (bool weighted : {false, true}) {
      const std::vector<double> capacities = {1.0, 3.0, 2.0, 1.5, 4.0, 1.0, 2.5};
      Router a(Config(policy, weighted), Targets(capacities), 99);
      Router b(Config(policy, weighted), Targets(capacities), 99);
      Router c(Config(policy, weighted), Targets(capacities), 100);
      const std::vector<InstanceLoad> loads = Outstanding({3, 1, 4, 1, 5, 9, 2});
      a.Refresh(loads);
      b.Refresh(loads);
      c.Refresh(loads);
      const std::vector<int32_t> got = RouteMany(a, 5000);
      EXPECT_EQ(got, RouteMany(b, 5000));
      EXPECT_NE(got, RouteMany(c, 5000));
    }
  }
}

// ---- least_outstanding and least_kv ------------------------------------------------------

TEST(LeastOutstanding, ViewIsSnapshotPlusOwnAssignmentsUntilRefresh) {
  Router router(Config(RoutingPolicy::kLeastOutstanding), Targets({1, 1, 1, 1}), 1);
  const std::vector<InstanceLoad> snapshot = Outstanding({3, 1, 1, 2});
  router.Refresh(snapshot);
  EXPECT_EQ(RouteMany(router, 6), (std::vector<int32_t>{1, 2, 1, 2, 3, 0}));
  router.Refresh(snapshot);  // own assignments forgotten
  EXPECT_EQ(RouteMany(router, 2), (std::vector<int32_t>{1, 2}));
  router.Refresh(Outstanding({0, 5, 5, 5}));
  EXPECT_EQ(RouteMany(router, 6), (std::vector<int32_t>{0, 0, 0, 0, 0, 0}));
}

TEST(LeastOutstanding, WeightedDividesOutstandingPlusOneByCapacity) {
  Router router(Config(RoutingPolicy::kLeastOutstanding, true), Targets({1.0, 2.0, 4.0}), 1);
  router.Refresh(Outstanding({0, 0, 0}));
  // (o+1)/c: 1, .5, .25 -> 2; then 1, .5, .5 -> 1 (tie, lower id); 1, 1, .5 -> 2;
  // 1, 1, .75 -> 2; 1, 1, 1 -> 0.
  EXPECT_EQ(RouteMany(router, 5), (std::vector<int32_t>{2, 1, 2, 2, 0}));
}

TEST(LeastKv, FractionOfPoolWithCeilBlocksPerPrompt) {
  std::vector<RouteTarget> targets = {{0, 1.0, 100, 16}, {1, 1.0, 200, 16}, {2, 1.0, 400, 16}};
  Router router(Config(RoutingPolicy::kLeastKv), targets, 1);
  const std::vector<InstanceLoad> snapshot = {{0, 10}, {0, 30}, {0, 50}};  // .1 .15 .125
  router.Refresh(snapshot);
  EXPECT_EQ(router.Route({160, std::nullopt}), 0);  // +10 blocks: .2
  EXPECT_EQ(router.Route({161, std::nullopt}), 2);  // +11 blocks (ceil): 61/400 = .1525
  EXPECT_EQ(router.Route({1, std::nullopt}), 1);    // +1 block: 31/200 = .155
  EXPECT_EQ(router.Route({0, std::nullopt}), 2);    // .1525 is now the least
  router.Refresh(snapshot);
  EXPECT_EQ(router.Route({}), 0);
}

TEST(LeastKv, BlocksUseTheTargetsOwnBlockSize) {
  std::vector<RouteTarget> targets = {{0, 1.0, 100, 784}, {1, 1.0, 100, 16}};
  Router router(Config(RoutingPolicy::kLeastKv), targets, 1);
  router.Refresh(std::vector<InstanceLoad>(2));
  EXPECT_EQ(router.Route({800, std::nullopt}), 0);  // 2 blocks of 784
  EXPECT_EQ(router.Route({800, std::nullopt}), 1);  // 50 blocks of 16
  EXPECT_EQ(router.Route({800, std::nullopt}), 0);  // 2/100 < 50/100: 0 again
  EXPECT_EQ(router.Route({800, std::nullopt}), 0);  // 4/100
}

TEST(LeastKv, WeightedPrefersTheEmptyBigInstance) {
  std::vector<RouteTarget> targets = {{0, 1.0, 100, 16}, {1, 3.0, 100, 16}};
  Router router(Config(RoutingPolicy::kLeastKv, true), targets, 1);
  router.Refresh(std::vector<InstanceLoad>(2));
  // (used+1)/(pool x c): 1/100 vs 1/300 -> 1; after 1 block, 2/300 -> 1; after 2, 3/300 ties
  // 1/100 -> 0 (lower id).
  EXPECT_EQ(router.Route({16, std::nullopt}), 1);
  EXPECT_EQ(router.Route({16, std::nullopt}), 1);
  EXPECT_EQ(router.Route({16, std::nullopt}), 0);
}

TEST(LoadPolicies, TiesGoToTheLowestInstanceId) {
  for (RoutingPolicy policy : {RoutingPolicy::kLeastOutstanding, RoutingPolicy::kLeastKv,
                               RoutingPolicy::kPowerOfTwo, RoutingPolicy::kPrefixAffinity}) {
    for (bool weighted : {false, true}) {
      std::vector<RouteTarget> targets = {{9, 2.0, 500, 16}, {4, 2.0, 500, 16}, {6, 2.0, 500, 16}};
      if (policy == RoutingPolicy::kPowerOfTwo) targets.resize(2);  // both are always drawn
      Router router(Config(policy, weighted), targets, 5);
      std::vector<InstanceLoad> loads(10, {7, 70});
      router.Refresh(loads);
      // No prefix key: prefix_affinity routes as least_outstanding.
      EXPECT_EQ(router.Route({}), 4) << static_cast<int>(policy) << weighted;
    }
  }
}

// The tournament trees against an O(n) scan, on random loads with many ties.
class BruteForce {
 public:
  BruteForce(RoutingPolicy policy, bool weighted, const std::vector<RouteTarget>& targets)
      : policy_(policy), weighted_(weighted), targets_(targets) {
    double min_capacity = targets[0].capacity;
    for (const RouteTarget& t : targets)
      min_capacity = std::min(min_capacity, t.capacity);
    for (const RouteTarget& t : targets)
      weight_.push_back(static_cast<uint64_t>(std::llround(t.capacity / min_capacity * 1000.0)));
  }
  void Refresh(const std::vector<InstanceLoad>& loads) {
    outstanding_.clear();
    kv_.clear();
    for (const RouteTarget& t : targets_) {
      outstanding_.push_back(
          static_cast<uint64_t>(loads[static_cast<size_t>(t.instance)].outstanding));
      kv_.push_back(static_cast<uint64_t>(loads[static_cast<size_t>(t.instance)].kv_used_blocks));
    }
  }
  int32_t Route(int64_t prompt_tokens) {
    size_t best = 0;
    for (size_t i = 1; i < targets_.size(); ++i)
      if (Less(i, best)) best = i;
    ++outstanding_[best];
    kv_[best] += static_cast<uint64_t>((prompt_tokens + targets_[best].block_size - 1) /
                                       targets_[best].block_size);
    return targets_[best].instance;
  }

 private:
  bool Less(size_t a, size_t b) const {
    const auto pool_a = static_cast<uint64_t>(targets_[a].pool_blocks);
    const auto pool_b = static_cast<uint64_t>(targets_[b].pool_blocks);
    if (policy_ == RoutingPolicy::kLeastOutstanding) {
      if (!weighted_) return outstanding_[a] < outstanding_[b];
      return (outstanding_[a] + 1) * weight_[b] < (outstanding_[b] + 1) * weight_[a];
    }
    if (!weighted_) return kv_[a] * pool_b < kv_[b] * pool_a;
    return (kv_[a] + 1) * pool_b * weight_[b] < (kv_[b] + 1) * pool_a * weight_[a];
  }

  RoutingPolicy policy_;
  bool weighted_;
  std::vector<RouteTarget> targets_;
  std::vector<uint64_t> weight_;
  std::vector<uint64_t> outstanding_;
  std::vector<uint64_t> kv_;
};

TEST(LoadPolicies, TreesAgreeWithBruteForceAtAThousandTargets) {
  const std::vector<double> kinds = {1.0, 1.5, 2.0, 3.25};
  const std::vector<int64_t> pools = {500, 1000, 2000};
  for (RoutingPolicy policy : {RoutingPolicy::kLeastOutstanding, RoutingPolicy::kLeastKv}) {
    for (bool weighted : {false, true}) {
      Rng rng(static_cast<uint64_t>(policy) * 2 + (weighted ? 1 : 0));
      std::vector<RouteTarget> targets;
      for (int32_t i = 0; i < 1000; ++i) {
        // Ids with gaps, given out of order.
        targets.push_back({2 * (999 - i) + 1, kinds[Below(rng, kinds.size())],
                           pools[Below(rng, pools.size())], i % 2 == 0 ? 16 : 784});
      }
      Router router(Config(policy, weighted), targets, 3);
      std::sort(targets.begin(), targets.end(),
                [](const RouteTarget& a, const RouteTarget& b) { return a.instance < b.instance; });
      BruteForce reference(policy, weighted, targets);
      for (int route = 0; route < 10000; ++route) {
        if (route % 997 == 0) {
          std::vector<InstanceLoad> loads(2000);
          for (InstanceLoad& l : loads) {
            l.outstanding = static_cast<int32_t>(Below(rng, 4));
            l.kv_used_blocks = static_cast<int32_t>(Below(rng, 3) * 100);
          }
          router.Refresh(loads);
          reference.Refresh(loads);
        }
        const auto prompt = static_cast<int64_t>(Below(rng, 4000));
        ASSERT_EQ(router.Route({prompt, std::nullopt}), reference.Route(prompt))
            << "policy " << static_cast<int>(policy) << " weighted " << weighted << " route "
            << route;
      }
    }
  }
}

// The tournament tree's best after each batch of key changes -- one Update per changed
// index, called after the whole batch, or after each change -- is the brute-force least
// key (ties to the lower index), at sizes that leave empty leaves and at a thousand. The
// walk up stops early; this holds it to stopping only where nothing above can move.
TEST(ArgBestTree, BestAfterBatchesOfChangesIsTheBruteForceLeast) {
  struct Less {
    const std::vector<int64_t>* keys;
    bool operator()(int32_t a, int32_t b) const {
      return (*keys)[static_cast<size_t>(a)] < (*keys)[static_cast<size_t>(b)];
    }
  };
  for (int32_t n : {1, 2, 3, 7, 64, 1000}) {
    Rng rng(static_cast<uint64_t>(n));
    std::vector<int64_t> keys(static_cast<size_t>(n));
    for (int64_t& key : keys)
      key = static_cast<int64_t>(Below(rng, 6));
    router_internal::ArgBestTree<Less> tree(n, Less{&keys});
    for (int batch = 0; batch < 3000; ++batch) {
      const bool each = batch % 3 == 0;
      std::set<int32_t> changed;
      for (uint64_t c = 1 + Below(rng, 12); c > 0; --c) {
        const auto index = static_cast<int32_t>(Below(rng, static_cast<uint64_t>(n)));
        if (!changed.insert(index).second) continue;
        keys[static_cast<size_t>(index)] = static_cast<int64_t>(Below(rng, 6));
        if (each) tree.Update(index);
      }
      if (!each) {
        for (int32_t index : changed)
          tree.Update(index);
      }
      const auto least =
          static_cast<int32_t>(std::min_element(keys.begin(), keys.end()) - keys.begin());
      ASSERT_EQ(tree.Best(), least) << "n " << n << " batch " << batch;
    }
  }
}

// Only the loads that changed since the last snapshot, applied, route exactly as the whole
// snapshot does: for every load-reading policy, with a few changes (each updated in place)
// and with many (a rebuild), own assignments forgotten either way.
TEST(LoadPolicies, ChangedLoadsRouteAsTheWholeSnapshotDoes) {
  const std::vector<double> kinds = {1.0, 1.5, 2.0};
  for (RoutingPolicy policy : {RoutingPolicy::kLeastOutstanding, RoutingPolicy::kLeastKv,
                               RoutingPolicy::kPowerOfTwo, RoutingPolicy::kPrefixAffinity}) {
    for (bool weighted : {false, true}) {
      Rng rng(11 + static_cast<uint64_t>(policy) * 2 + (weighted ? 1 : 0));
      std::vector<RouteTarget> targets;
      for (int32_t i = 0; i < 300; ++i)  // odd ids only: the even ones are not targets
        targets.push_back({2 * i + 1, kinds[Below(rng, kinds.size())], 1000, 16});
      Router whole(Config(policy, weighted), targets, 5);
      Router changed(Config(policy, weighted), targets, 5);
      std::vector<InstanceLoad> loads(601);
      for (int snapshot = 0; snapshot < 60; ++snapshot) {
        // Snapshots alternate between a few changes after a few routes (each entry
        // updated in place) and changes to most instances after many (a rebuild).
        const bool few = snapshot % 2 == 0;
        const uint64_t changes = few ? 1 + Below(rng, 4) : 400;
        std::vector<LoadChange> sent;
        std::set<int32_t> named;
        for (uint64_t c = 0; c < changes; ++c) {
          const auto id = static_cast<int32_t>(Below(rng, loads.size()));
          if (!named.insert(id).second) continue;
          InstanceLoad& load = loads[static_cast<size_t>(id)];
          load = {static_cast<int32_t>(Below(rng, 6)), static_cast<int32_t>(Below(rng, 900))};
          sent.push_back({id, load});
        }
        whole.Refresh(loads);
        changed.Apply(sent);
        for (int route = 0; route < (few ? 8 : 40); ++route) {
          RouteRequest request{static_cast<int64_t>(Below(rng, 3000)), std::nullopt};
          if (route % 3 != 0) request.prefix_key = Below(rng, 8);
          ASSERT_EQ(changed.Route(request), whole.Route(request))
              << "policy " << static_cast<int>(policy) << " weighted " << weighted << " snapshot "
              << snapshot << " route " << route;
        }
      }
    }
  }
}

TEST(LoadPolicies, ApplyingNoChangeForgetsOwnAssignments) {
  Router router(Config(RoutingPolicy::kLeastOutstanding), Targets({1, 1, 1}), 1);
  router.Apply(std::vector<LoadChange>{{1, {2, 0}}});
  EXPECT_EQ(RouteMany(router, 3), (std::vector<int32_t>{0, 2, 0}));
  router.Apply({});  // back to the snapshot: 0, 2, 0
  EXPECT_EQ(RouteMany(router, 3), (std::vector<int32_t>{0, 2, 0}));
  router.Apply(std::vector<LoadChange>{{0, {5, 0}}, {7, {0, 0}}});  // 7 is not a target here
  EXPECT_EQ(RouteMany(router, 3), (std::vector<int32_t>{2, 2, 1}));
  EXPECT_THROW(router.Apply(std::vector<LoadChange>{{2, {-1, 0}}}), std::invalid_argument);
  EXPECT_THROW(router.Apply(std::vector<LoadChange>{{-1, {0, 0}}}), std::invalid_argument);
}

// ---- power_of_two -----------------------------------------------------------------------

TEST(PowerOfTwo, NeverPicksTheMoreLoadedOfItsTwo) {
  {
    // Two targets: both are always the candidates, so the less loaded always wins.
    Router router(Config(RoutingPolicy::kPowerOfTwo), Targets({1, 1}), 8);
    for (int i = 0; i < 200; ++i) {
      router.Refresh(Outstanding({i % 2 == 0 ? 5 : 2, 3}));
      EXPECT_EQ(router.Route({}), i % 2 == 0 ? 1 : 0);
    }
  }
  // Three targets, loads 0 < 5 < 10: the most loaded never wins; the middle one wins only
  // when drawn with it (1/3 of pairs).
  Router router(Config(RoutingPolicy::kPowerOfTwo), Targets({1, 1, 1}), 8);
  std::vector<int> count(3, 0);
  const int routes = 6000;
  for (int i = 0; i < routes; ++i) {
    router.Refresh(Outstanding({10, 0, 5}));
    ++count[static_cast<size_t>(router.Route({}))];
  }
  EXPECT_EQ(count[0], 0);
  EXPECT_NEAR(count[2] / double{routes}, 1.0 / 3.0, 0.03);
}

TEST(PowerOfTwo, WeightedDrawsAndComparesByCapacity) {
  Router router(Config(RoutingPolicy::kPowerOfTwo, true), Targets({1.0, 1.0, 8.0}), 8);
  std::vector<int> count(3, 0);
  const int routes = 5000;
  for (int i = 0; i < routes; ++i) {
    router.Refresh(Outstanding({0, 0, 0}));  // (o+1)/c: the big one wins whenever drawn
    ++count[static_cast<size_t>(router.Route({}))];
  }
  // Drawn with probability .8 + .2 x 8/9 = .978 when weighted (2/3 if not).
  EXPECT_NEAR(count[2] / double{routes}, 0.978, 0.015);
  // (8+1)/8 > (0+1)/1: now the big one is the more loaded of any pair it is in.
  count.assign(3, 0);
  for (int i = 0; i < routes; ++i) {
    router.Refresh(Outstanding({0, 0, 8}));
    ++count[static_cast<size_t>(router.Route({}))];
  }
  EXPECT_EQ(count[2], 0);
}

TEST(PowerOfTwo, OneTargetIsTheChoice) {
  for (bool weighted : {false, true}) {
    Router router(Config(RoutingPolicy::kPowerOfTwo, weighted), {{42, 3.0, 10, 16}}, 1);
    router.Refresh(std::vector<InstanceLoad>(43));
    EXPECT_EQ(RouteMany(router, 3), (std::vector<int32_t>{42, 42, 42}));
  }
}

// ---- prefix_affinity --------------------------------------------------------------------

RouterConfig AffinityConfig(bool weighted, int virtual_nodes = 64) {
  RouterConfig config = Config(RoutingPolicy::kPrefixAffinity, weighted);
  config.virtual_nodes = virtual_nodes;
  config.overload_margin = 1 << 30;  // never overloaded
  return config;
}

std::vector<double> AffinityShares(Router& router, int instances, int keys) {
  Rng rng(77);
  std::vector<double> share(static_cast<size_t>(instances), 0.0);
  for (int k = 0; k < keys; ++k)
    share[static_cast<size_t>(router.Route({0, rng.NextU64()}))] += 1.0 / keys;
  return share;
}

TEST(PrefixAffinity, SameKeySameInstance) {
  Router router(AffinityConfig(false), Targets(std::vector<double>(10, 1.0)), 1);
  Router twin(AffinityConfig(false), Targets(std::vector<double>(10, 1.0)), 2);
  Rng rng(5);
  for (int k = 0; k < 1000; ++k) {
    const uint64_t key = rng.NextU64();
    const int32_t first = router.Route({0, key});
    EXPECT_EQ(router.Route({0, key}), first);
    EXPECT_EQ(twin.Route({0, key}), first);  // the ring does not depend on the seed
  }
}

TEST(PrefixAffinity, KeyGoesToTheFirstPointAtOrAfterItWrappingRound) {
  int wraps_elsewhere = 0;  // rings whose last point's target is not the first's
  for (int targets : {3, 5, 7, 11}) {
    for (int nodes : {2, 8}) {
      std::vector<std::pair<uint64_t, int32_t>> ring;
      for (int32_t id = 0; id < targets; ++id)
        for (int r = 0; r < nodes; ++r)
          ring.push_back({router_internal::RingPoint(id, r), id});
      std::sort(ring.begin(), ring.end());
      wraps_elsewhere += ring.front().second != ring.back().second ? 1 : 0;
      auto owner = [&](uint64_t key) {
        auto it = std::lower_bound(ring.begin(), ring.end(), std::pair<uint64_t, int32_t>{key, -1});
        return it == ring.end() ? ring.front().second : it->second;
      };
      Router router(AffinityConfig(false, nodes),
                    Targets(std::vector<double>(static_cast<size_t>(targets), 1.0)), 1);
      std::vector<uint64_t> keys = {0, ~uint64_t{0}, ring.back().first + 1};
      for (const auto& [point, id] : ring) {
        keys.push_back(point);  // exactly on a point: that point's target
        keys.push_back(point - 1);
        keys.push_back(point + 1);
      }
      for (uint64_t key : keys)
        EXPECT_EQ(router.Route({0, key}), owner(key)) << key;
    }
  }
  EXPECT_GT(wraps_elsewhere, 0);
}

TEST(PrefixAffinity, KeysSpreadEvenlyOrByCapacity) {
  Router even(AffinityConfig(false), Targets(std::vector<double>(8, 1.0)), 1);
  for (double share : AffinityShares(even, 8, 40000))
    EXPECT_NEAR(share, 1.0 / 8, 0.4 / 8);
  Router weighted(AffinityConfig(true, 256), Targets({1.0, 1.0, 2.0, 4.0}), 1);
  const std::vector<double> expected = {1.0 / 8, 1.0 / 8, 2.0 / 8, 4.0 / 8};
  const std::vector<double> got = AffinityShares(weighted, 4, 40000);
  for (size_t i = 0; i < 4; ++i)
    EXPECT_NEAR(got[i], expected[i], 0.25 * expected[i]) << i;
}

TEST(PrefixAffinity, AddingATargetMovesOnlyItsShareOfKeys) {
  std::vector<RouteTarget> targets = Targets(std::vector<double>(10, 1.0));
  Router before(AffinityConfig(false), targets, 1);
  targets.push_back({10, 1.0, 1000, 16});
  Router after(AffinityConfig(false), targets, 1);
  Rng rng(9);
  const int keys = 20000;
  int moved = 0;
  for (int k = 0; k < keys; ++k) {
    const uint64_t key = rng.NextU64();
    const int32_t was = before.Route({0, key});
    const int32_t now = after.Route({0, key});
    if (was == now) continue;
    ++moved;
    EXPECT_EQ(now, 10);  // keys only move to the new target
  }
  EXPECT_NEAR(moved / double{keys}, 1.0 / 11, 0.04);
}

TEST(PrefixAffinity, OverloadedOwnerFallsBackToLeastOutstanding) {
  RouterConfig config = Config(RoutingPolicy::kPrefixAffinity);  // margin 16, ratio 1.5
  Router router(config, Targets({1, 1, 1}), 1);
  const uint64_t key = 12345;
  router.Refresh(Outstanding({0, 0, 0}));
  const int32_t owner = router.Route({0, key});
  const int32_t other = owner == 0 ? 1 : 0;  // the lowest id that is not the owner
  auto route_with = [&](int32_t owner_load, int32_t others) {
    std::vector<int32_t> loads(3, others);
    loads[static_cast<size_t>(owner)] = owner_load;
    router.Refresh(Outstanding(loads));
    return router.Route({0, key});
  };
  EXPECT_EQ(route_with(16, 0), owner);   // 16 is not > 0 + 16
  EXPECT_EQ(route_with(17, 0), other);   // > 16 and > 0
  EXPECT_EQ(route_with(60, 40), owner);  // > 56 but not > 1.5 x 40
  EXPECT_EQ(route_with(61, 40), other);  // > 56 and > 60
  EXPECT_EQ(route_with(44, 25), other);  // > 41 and > 37.5
  EXPECT_EQ(route_with(41, 25), owner);  // not > 41
}

TEST(PrefixAffinity, NoKeyRoutesAsLeastOutstandingWeightedWhenAsked) {
  Router plain(Config(RoutingPolicy::kPrefixAffinity), Targets({1.0, 4.0}), 1);
  Router weighted(Config(RoutingPolicy::kPrefixAffinity, true), Targets({1.0, 4.0}), 1);
  plain.Refresh(Outstanding({1, 3}));
  weighted.Refresh(Outstanding({1, 3}));
  EXPECT_EQ(plain.Route({}), 0);     // 1 < 3
  EXPECT_EQ(weighted.Route({}), 1);  // (3+1)/4 < (1+1)/1
}

// ---- errors -----------------------------------------------------------------------------

TEST(Router, RefusesBadTargetsAndShortSnapshots) {
  const RouterConfig config = Config(RoutingPolicy::kLeastOutstanding);
  EXPECT_THROW(Router(config, {}, 1), std::invalid_argument);
  EXPECT_THROW(Router(config, {{3, 1.0, 10, 16}, {3, 1.0, 10, 16}}, 1), std::invalid_argument);
  EXPECT_THROW(Router(config, {{3, 0.0, 10, 16}}, 1), std::invalid_argument);
  EXPECT_THROW(Router(config, {{3, 1.0, 0, 16}}, 1), std::invalid_argument);
  Router router(config, {{3, 1.0, 10, 16}, {1, 1.0, 10, 16}}, 1);
  EXPECT_THROW(router.Refresh(std::vector<InstanceLoad>(3)), std::invalid_argument);
  router.Refresh(std::vector<InstanceLoad>(4));
  EXPECT_EQ(router.Route({}), 1);
  Router moved = std::move(router);
  EXPECT_EQ(moved.Route({}), 3);
  EXPECT_EQ(moved.config().policy, RoutingPolicy::kLeastOutstanding);
}

}  // namespace
}  // namespace fleetsim
