#include "fleet/router.h"

#include <algorithm>
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
  view.targets = std::move(targets);
  state_->picker = router_internal::MakePicker(state_->config, view, stream_seed);
}

Router::~Router() = default;
Router::Router(Router&&) noexcept = default;
Router& Router::operator=(Router&&) noexcept = default;

void Router::Refresh(std::span<const InstanceLoad> snapshot) {
  LoadView& view = state_->view;
  if (snapshot.size() <= static_cast<size_t>(view.targets.back().instance))
    throw std::invalid_argument("Router::Refresh: the snapshot covers instances below " +
                                std::to_string(snapshot.size()) + ", the router targets " +
                                std::to_string(view.targets.back().instance));
  for (size_t i = 0; i < view.targets.size(); ++i) {
    const InstanceLoad& load = snapshot[static_cast<size_t>(view.targets[i].instance)];
    if (load.outstanding < 0 || load.kv_used_blocks < 0)
      throw std::invalid_argument("Router::Refresh: negative load for instance " +
                                  std::to_string(view.targets[i].instance));
    view.outstanding[i] = load.outstanding;
    view.kv_used[i] = load.kv_used_blocks;
  }
  state_->picker->Refreshed();
}

int32_t Router::Route(const RouteRequest& request) {
  LoadView& view = state_->view;
  const int32_t index = state_->picker->Pick(request);
  const auto i = static_cast<size_t>(index);
  view.outstanding[i] += 1;
  view.kv_used[i] += BlocksFor(request.prompt_tokens, view.targets[i].block_size);
  state_->picker->Assigned(index);
  return view.targets[i].instance;
}

void Router::Observe(int32_t instance, const RouteRequest& request) {
  LoadView& view = state_->view;
  const auto it =
      std::lower_bound(view.targets.begin(), view.targets.end(), instance,
                       [](const RouteTarget& t, int32_t id) { return t.instance < id; });
  if (it == view.targets.end() || it->instance != instance) return;
  const auto i = static_cast<size_t>(it - view.targets.begin());
  view.outstanding[i] += 1;
  view.kv_used[i] += BlocksFor(request.prompt_tokens, view.targets[i].block_size);
  state_->picker->Assigned(static_cast<int32_t>(i));
}

const RouterConfig& Router::config() const {
  return state_->config;
}

}  // namespace fleetsim
