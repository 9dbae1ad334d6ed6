#include "fleet/router_policies.h"

#include <algorithm>
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

#include "core/random.h"
#include "fleet/router_ring.h"
#include "fleet/router_swrr.h"

namespace fleetsim::router_internal {
namespace {

// round_robin: targets in instance-id order, over and over.
class RoundRobinPicker final : public Picker {
 public:
  explicit RoundRobinPicker(int32_t n) : n_(n) {}
  int32_t Pick(const RouteRequest&) override {
    const int32_t chosen = next_;
    next_ = next_ + 1 == n_ ? 0 : next_ + 1;
    return chosen;
  }
  void Save(CheckpointWriter& w) const override { w.I32(next_); }
  void Load(CheckpointReader& r) override {
    next_ = r.I32();
    r.Require(next_ >= 0 && next_ < n_, "round-robin position");
  }

 private:
  int32_t n_;
  int32_t next_ = 0;
};

// round_robin, capacity_weighted: nginx's smooth weighted round robin.
class WeightedRoundRobinPicker final : public Picker {
 public:
  explicit WeightedRoundRobinPicker(const LoadView& view) : wrr_(view.weights) {}
  int32_t Pick(const RouteRequest&) override { return wrr_.Next(); }
  void Save(CheckpointWriter& w) const override { wrr_.Save(w); }
  void Load(CheckpointReader& r) override { wrr_.Load(r); }

 private:
  SmoothWeightedRoundRobin wrr_;
};

// Draws target indices from the router's stream: uniformly, or in proportion to the
// integer capacity weights (prefix sums + binary search). Integer draws only.
class Sampler {
 public:
  Sampler(const LoadView& view, bool weighted, uint64_t stream_seed)
      : rng_(stream_seed), n_(static_cast<uint64_t>(view.size())) {
    if (!weighted) return;
    uint64_t sum = 0;
    for (uint64_t w : view.weights)
      prefix_.push_back(sum += w);
  }

  int32_t Draw() {
    if (prefix_.empty()) return static_cast<int32_t>(Below(n_));
    return Locate(Below(prefix_.back()));
  }

  // A draw from the others (needs two targets or more).
  int32_t DrawOther(int32_t first) {
    const auto i = static_cast<size_t>(first);
    if (prefix_.empty()) {
      const auto other = static_cast<int32_t>(Below(n_ - 1));
      return other >= first ? other + 1 : other;
    }
    const uint64_t weight = prefix_[i] - (i == 0 ? 0 : prefix_[i - 1]);
    uint64_t r = Below(prefix_.back() - weight);
    if (r >= prefix_[i] - weight) r += weight;  // skip over `first`'s stretch
    return Locate(r);
  }

  void Save(CheckpointWriter& w) const { w.U64(rng_.state()); }
  void Load(CheckpointReader& r) { rng_ = Rng(r.U64()); }

 private:
  // Uniform in [0, bound) by rejection: exact, and the same everywhere.
  uint64_t Below(uint64_t bound) {
    const uint64_t threshold = (0 - bound) % bound;  // 2^64 mod bound
    for (;;) {
      const uint64_t x = rng_.NextU64();
      if (x >= threshold) return x % bound;
    }
  }
  // The index whose stretch [prefix[i-1], prefix[i]) holds r.
  int32_t Locate(uint64_t r) const {
    return static_cast<int32_t>(std::upper_bound(prefix_.begin(), prefix_.end(), r) -
                                prefix_.begin());
  }

  Rng rng_;
  uint64_t n_;
  std::vector<uint64_t> prefix_;  // inclusive sums of the weights; empty when unweighted
};

// random: one draw per request.
class RandomPicker final : public Picker {
 public:
  RandomPicker(const LoadView& view, bool weighted, uint64_t stream_seed)
      : sampler_(view, weighted, stream_seed) {}
  int32_t Pick(const RouteRequest&) override { return sampler_.Draw(); }
  void Save(CheckpointWriter& w) const override { sampler_.Save(w); }
  void Load(CheckpointReader& r) override { sampler_.Load(r); }

 private:
  Sampler sampler_;
};

// least_outstanding / least_kv (weighted or not): the best of a tournament tree under
// `Less`, kept up to date as the view changes.
template <typename Less>
class LeastLoadedPicker final : public Picker {
 public:
  explicit LeastLoadedPicker(const LoadView& view) : tree_(view.size(), Less{&view}) {}
  int32_t Pick(const RouteRequest&) override { return tree_.Best(); }
  void Changed(int32_t index) override { tree_.Update(index); }
  void Refreshed() override { tree_.Build(); }

 private:
  ArgBestTree<Less> tree_;
};

// power_of_two: two distinct draws, the less (weighted) outstanding one wins.
template <typename Less>
class PowerOfTwoPicker final : public Picker {
 public:
  PowerOfTwoPicker(const LoadView& view, bool weighted, uint64_t stream_seed)
      : view_(view), sampler_(view, weighted, stream_seed) {}
  int32_t Pick(const RouteRequest&) override {
    if (view_.size() == 1) return 0;
    const int32_t a = sampler_.Draw();
    const int32_t b = sampler_.DrawOther(a);
    const int32_t low = std::min(a, b);
    const int32_t high = std::max(a, b);
    return Less{&view_}(high, low) ? high : low;
  }
  void Save(CheckpointWriter& w) const override { sampler_.Save(w); }
  void Load(CheckpointReader& r) override { sampler_.Load(r); }

 private:
  const LoadView& view_;
  Sampler sampler_;
};

// Ring points per target: virtual_nodes each, or virtual_nodes x capacity / mean capacity
// (rounded, at least 1) when weighted.
std::vector<int64_t> RingPoints(const RouterConfig& config, const LoadView& view) {
  const auto nodes = static_cast<uint64_t>(config.virtual_nodes);
  std::vector<int64_t> points(view.weights.size(), config.virtual_nodes);
  if (!config.capacity_weighted) return points;
  U128 sum = 0;
  for (uint64_t w : view.weights)
    sum += w;
  for (size_t i = 0; i < points.size(); ++i) {
    const U128 share = U128{nodes} * view.weights[i] * points.size();  // / sum, rounded
    points[i] = std::max<int64_t>(1, static_cast<int64_t>((2 * share + sum) / (2 * sum)));
  }
  return points;
}

// prefix_affinity: the ring's owner of the request's prefix key, unless it is overloaded
// (or there is no key): then least outstanding.
class PrefixAffinityPicker final : public Picker {
 public:
  PrefixAffinityPicker(const RouterConfig& config, const LoadView& view)
      : config_(config),
        view_(view),
        ring_(Instances(view), RingPoints(config, view)),
        least_(view.size(), FewerOutstanding{&view}) {
    if (config.capacity_weighted)
      weighted_least_.emplace(view.size(), FewerWeightedOutstanding{&view});
  }

  int32_t Pick(const RouteRequest& request) override {
    const int32_t fallback = weighted_least_ ? weighted_least_->Best() : least_.Best();
    if (!request.prefix_key) return fallback;
    const int32_t owner = ring_.Owner(*request.prefix_key);
    const uint64_t load = view_.Outstanding(owner);
    const uint64_t least = view_.Outstanding(least_.Best());
    const bool overloaded =
        load > least + static_cast<uint64_t>(config_.overload_margin) &&
        static_cast<double>(load) > config_.overload_ratio * static_cast<double>(least);
    return overloaded ? fallback : owner;
  }
  void Changed(int32_t index) override {
    least_.Update(index);
    if (weighted_least_) weighted_least_->Update(index);
  }
  void Refreshed() override {
    least_.Build();
    if (weighted_least_) weighted_least_->Build();
  }

 private:
  static std::vector<int32_t> Instances(const LoadView& view) {
    std::vector<int32_t> ids;
    ids.reserve(view.targets.size());
    for (const RouteTarget& t : view.targets)
      ids.push_back(t.instance);
    return ids;
  }

  RouterConfig config_;
  const LoadView& view_;
  HashRing ring_;
  ArgBestTree<FewerOutstanding> least_;
  std::optional<ArgBestTree<FewerWeightedOutstanding>> weighted_least_;
};

}  // namespace

std::unique_ptr<Picker> MakePicker(const RouterConfig& config, const LoadView& view,
                                   uint64_t stream_seed) {
  const bool weighted = config.capacity_weighted;
  switch (config.policy) {
    case RoutingPolicy::kRoundRobin:
      if (weighted) return std::make_unique<WeightedRoundRobinPicker>(view);
      return std::make_unique<RoundRobinPicker>(view.size());
    case RoutingPolicy::kRandom:
      return std::make_unique<RandomPicker>(view, weighted, stream_seed);
    case RoutingPolicy::kLeastOutstanding:
      if (weighted) return std::make_unique<LeastLoadedPicker<FewerWeightedOutstanding>>(view);
      return std::make_unique<LeastLoadedPicker<FewerOutstanding>>(view);
    case RoutingPolicy::kLeastKv:
      if (weighted) return std::make_unique<LeastLoadedPicker<LowerWeightedKvUsage>>(view);
      return std::make_unique<LeastLoadedPicker<LowerKvUsage>>(view);
    case RoutingPolicy::kPowerOfTwo:
      if (weighted)
        return std::make_unique<PowerOfTwoPicker<FewerWeightedOutstanding>>(view, true,
                                                                            stream_seed);
      return std::make_unique<PowerOfTwoPicker<FewerOutstanding>>(view, false, stream_seed);
    case RoutingPolicy::kPrefixAffinity:
      if (config.virtual_nodes < 1)
        throw std::invalid_argument("prefix_affinity router: virtual_nodes must be >= 1");
      return std::make_unique<PrefixAffinityPicker>(config, view);
  }
  throw std::invalid_argument("Router: unknown routing policy");
}

}  // namespace fleetsim::router_internal
