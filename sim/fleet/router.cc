#include "fleet/router.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>

#include "core/hash64.h"
#include "fleet/router_policies.h"
#include "fleet/router_view.h"

namespace fleetsim {

using router_internal::kMaxPoolBlocks;
using router_internal::kMaxWeight;
using router_internal::kWeightScale;
using router_internal::LoadView;
using router_internal::Picker;

// Salts gateway ids before they are mixed into the run's seed ("gateway\0" in ASCII),
// keeping the routers' streams apart from other streams drawn from small numbers.
constexpr uint64_t kGatewayStreamSalt = 0x6761746577617900;

uint64_t StreamSeedOfGateway(uint64_t seed, int32_t gateway) {
  return Mix64(seed ^ Mix64(kGatewayStreamSalt + static_cast<uint64_t>(gateway)));
}

uint64_t StreamSeedOfGateway(uint64_t seed, int32_t gateway, std::string_view model) {
  // FNV-1a over the name's bytes (exact and the same everywhere), then mixed in.
  uint64_t name = 0xcbf29ce484222325ULL;
  for (const char c : model)
    name = (name ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
  return Mix64(StreamSeedOfGateway(seed, gateway) ^ SplitMix64(name));
}

std::optional<uint64_t> PrefixKey(std::span<const uint64_t> block_hashes, int prefix_blocks) {
  const size_t count =
      std::min(block_hashes.size(), static_cast<size_t>(std::max(prefix_blocks, 0)));
  if (count == 0) return std::nullopt;
  // Order-sensitive: each step mixes the running key with the next hash.
  uint64_t key = kGoldenGamma;
  for (size_t i = 0; i < count; ++i)
    key = Mix64(key ^ Mix64(block_hashes[i] + kGoldenGamma));
  return key;
}

namespace {

void CheckTargets(const std::vector<RouteTarget>& sorted) {
  if (sorted.empty()) throw std::invalid_argument("Router: no targets");
  for (size_t i = 0; i < sorted.size(); ++i) {
    const RouteTarget& t = sorted[i];
    const std::string which = "Router: target instance " + std::to_string(t.instance);
    if (t.instance < 0) throw std::invalid_argument(which + " has a negative id");
    if (i > 0 && sorted[i - 1].instance == t.instance)
      throw std::invalid_argument(which + " appears twice");
    if (!(t.capacity > 0.0) || !std::isfinite(t.capacity))
      throw std::invalid_argument(which + ": capacity must be positive and finite");
    if (t.pool_blocks < 1 || t.pool_blocks > kMaxPoolBlocks)
      throw std::invalid_argument(which + ": pool_blocks must be in [1, 2^40]");
    if (t.block_size < 1) throw std::invalid_argument(which + ": block_size must be >= 1");
  }
}

// capacity / min capacity x kWeightScale, rounded, in [1, kMaxWeight].
std::vector<uint64_t> CapacityWeights(const std::vector<RouteTarget>& targets) {
  double min_capacity = targets.front().capacity;
  for (const RouteTarget& t : targets)
    min_capacity = std::min(min_capacity, t.capacity);
  std::vector<uint64_t> weights;
  weights.reserve(targets.size());
  for (const RouteTarget& t : targets) {
    const double w = std::round(t.capacity / min_capacity * kWeightScale);
    weights.push_back(w >= static_cast<double>(kMaxWeight)
                          ? kMaxWeight
                          : std::max<uint64_t>(1, static_cast<uint64_t>(w)));
  }
  return weights;
}

int64_t BlocksFor(int64_t prompt_tokens, int32_t block_size) {
  if (prompt_tokens <= 0) return 0;
  return (prompt_tokens + block_size - 1) / block_size;
}

}  // namespace

struct Router::State {
  RouterConfig config;
  LoadView view;
  std::unique_ptr<Picker> picker;  // reads `view`; State stays put, so the address holds
  // The last snapshot by view index, and the entries of `view` that may differ from it
  // (assigned to since, or given a new load): a refresh touches only those.
  std::vector<InstanceLoad> snapshot;
  std::vector<int32_t> differs;
  std::vector<char> listed;       // by view index: in `differs`
  std::vector<int32_t> index_of;  // by global instance id: view index, -1 when not a target

  void Mark(int32_t index) {
    char& flag = listed[static_cast<size_t>(index)];
    if (flag) return;
    flag = 1;
    differs.push_back(index);
  }

  // Every listed entry back to the snapshot, and the picker told: entry by entry while
  // that is cheaper than rebuilding its structures (the two give the same picks).
  void ResetDiffering() {
    for (const int32_t index : differs) {
      const auto i = static_cast<size_t>(index);
      view.outstanding[i] = snapshot[i].outstanding;
      view.kv_used[i] = snapshot[i].kv_used_blocks;
      listed[i] = 0;
    }
    const auto n = static_cast<size_t>(view.size());
    if (differs.size() * static_cast<size_t>(std::bit_width(n)) >= n) {
      picker->Refreshed();
    } else {
      for (const int32_t index : differs)
        picker->Changed(index);
    }
    differs.clear();
  }
};

Router::Router(RouterConfig config, std::vector<RouteTarget> targets, uint64_t stream_seed)
    : state_(std::make_unique<State>()) {
  std::sort(targets.begin(), targets.end(),
            [](const RouteTarget& a, const RouteTarget& b) { return a.instance < b.instance; });
  CheckTargets(targets);
  state_->config = config;
  LoadView& view = state_->view;
  view.weights = CapacityWeights(targets);
  view.outstanding.assign(targets.size(), 0);
  view.kv_used.assign(targets.size(), 0);
  state_->snapshot.assign(targets.size(), InstanceLoad{});
  state_->listed.assign(targets.size(), 0);
  state_->index_of.assign(static_cast<size_t>(targets.back().instance) + 1, -1);
  for (size_t i = 0; i < targets.size(); ++i)
    state_->index_of[static_cast<size_t>(targets[i].instance)] = static_cast<int32_t>(i);
  view.targets = std::move(targets);
  state_->picker = router_internal::MakePicker(state_->config, view, stream_seed);
}

Router::~Router() = default;
Router::Router(Router&&) noexcept = default;
Router& Router::operator=(Router&&) noexcept = default;

namespace {

[[noreturn, gnu::cold, gnu::noinline]] void ThrowNegativeLoad(int32_t instance, const char* where) {
  throw std::invalid_argument(std::string(where) + ": negative load for instance " +
                              std::to_string(instance));
}

// Every router checks every change it takes: the check inline, its message out of line.
inline void RequireNonNegative(const InstanceLoad& load, int32_t instance, const char* where) {
  if (load.outstanding < 0 || load.kv_used_blocks < 0) [[unlikely]]
    ThrowNegativeLoad(instance, where);
}

}  // namespace

void Router::Refresh(std::span<const InstanceLoad> snapshot) {
  State& state = *state_;
  LoadView& view = state.view;
  if (snapshot.size() <= static_cast<size_t>(view.targets.back().instance))
    throw std::invalid_argument("Router::Refresh: the snapshot covers instances below " +
                                std::to_string(snapshot.size()) + ", the router targets " +
                                std::to_string(view.targets.back().instance));
  for (size_t i = 0; i < view.targets.size(); ++i) {
    const int32_t instance = view.targets[i].instance;
    const InstanceLoad& load = snapshot[static_cast<size_t>(instance)];
    RequireNonNegative(load, instance, "Router::Refresh");
    state.snapshot[i] = load;
    view.outstanding[i] = load.outstanding;
    view.kv_used[i] = load.kv_used_blocks;
  }
  for (const int32_t index : state.differs)
    state.listed[static_cast<size_t>(index)] = 0;
  state.differs.clear();
  state.picker->Refreshed();
}

void Router::Apply(std::span<const LoadChange> changes) {
  State& state = *state_;
  for (const LoadChange& change : changes) {
    if (change.instance < 0)
      throw std::invalid_argument("Router::Apply: negative instance id " +
                                  std::to_string(change.instance));
    const auto id = static_cast<size_t>(change.instance);
    if (id >= state.index_of.size() || state.index_of[id] < 0) continue;  // not a target
    RequireNonNegative(change.load, change.instance, "Router::Apply");
    const int32_t index = state.index_of[id];
    state.snapshot[static_cast<size_t>(index)] = change.load;
    state.Mark(index);
  }
  state.ResetDiffering();
}

int32_t Router::Route(const RouteRequest& request) {
  LoadView& view = state_->view;
  const int32_t index = state_->picker->Pick(request);
  const auto i = static_cast<size_t>(index);
  view.outstanding[i] += 1;
  view.kv_used[i] += BlocksFor(request.prompt_tokens, view.targets[i].block_size);
  state_->picker->Changed(index);
  state_->Mark(index);
  return view.targets[i].instance;
}

void Router::Observe(int32_t instance, const RouteRequest& request) {
  State& state = *state_;
  LoadView& view = state.view;
  if (instance < 0 || static_cast<size_t>(instance) >= state.index_of.size()) return;
  const int32_t index = state.index_of[static_cast<size_t>(instance)];
  if (index < 0) return;
  const auto i = static_cast<size_t>(index);
  view.outstanding[i] += 1;
  view.kv_used[i] += BlocksFor(request.prompt_tokens, view.targets[i].block_size);
  state.picker->Changed(index);
  state.Mark(index);
}

void Router::Save(CheckpointWriter& w) const {
  const State& state = *state_;
  w.Pods(state.view.outstanding);
  w.Pods(state.view.kv_used);
  w.Pods(state.snapshot);
  w.Pods(state.differs);
  state.picker->Save(w);
}

void Router::Load(CheckpointReader& r) {
  State& state = *state_;
  const std::size_t n = state.view.targets.size();
  state.view.outstanding = r.Pods<int64_t>();
  state.view.kv_used = r.Pods<int64_t>();
  state.snapshot = r.Pods<InstanceLoad>();
  state.differs = r.Pods<int32_t>();
  r.Require(state.view.outstanding.size() == n && state.view.kv_used.size() == n &&
                state.snapshot.size() == n,
            "router view size");
  state.listed.assign(n, 0);
  for (const int32_t index : state.differs) {
    r.Require(index >= 0 && static_cast<size_t>(index) < n, "router entry");
    state.listed[static_cast<size_t>(index)] = 1;
  }
  state.picker->Refreshed();  // its trees from the loaded view: the same as kept in step
  state.picker->Load(r);
}

const RouterConfig& Router::config() const {
  return state_->config;
}

}  // namespace fleetsim
