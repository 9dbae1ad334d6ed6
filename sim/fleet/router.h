// A gateway's router (SPEC.md, "Routers"): picks the instance for each request from a
// load view that is stale by design -- the snapshot taken at the last refresh plus the
// router's own assignments since. Deterministic: ties go to the lower instance id, and
// random choices come from the router's own stream.
//
//   Router router(config, targets, StreamSeedOfGateway(seed, gateway));
//   router.Refresh(snapshot);                  // a whole snapshot, or at each later one
//   router.Apply(changes);                     // only the loads that changed since
//   int32_t instance = router.Route({prompt_tokens, PrefixKey(hashes, 4)});
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "cluster/routing_policy.h"
#include "core/checkpoint_io.h"

namespace fleetsim {

// What a router knows of one candidate instance for the whole run.
struct RouteTarget {
  int32_t instance = 0;     // global instance id
  double capacity = 1.0;    // > 0: throughput of a saturated step, tokens/s (bundle)
  int64_t pool_blocks = 1;  // KV blocks, for least_kv
  int32_t block_size = 16;  // tokens per KV block
};

// One instance's load as the snapshot reports it.
struct InstanceLoad {
  int32_t outstanding = 0;     // handed to it and not yet finished (queued, running, in flight)
  int32_t kv_used_blocks = 0;  // blocks held by requests
};

// One instance's load in a snapshot where it changed since the one before.
struct LoadChange {
  int32_t instance = 0;  // global instance id
  InstanceLoad load;
};

struct RouteRequest {
  int64_t prompt_tokens = 0;
  std::optional<uint64_t> prefix_key;  // PrefixKey of the request's trace hashes, if any
};

// The seed of gateway `gateway`'s router stream in a run seeded `seed` (--seed): each
// gateway draws from its own stream, whatever rank it lives on.
uint64_t StreamSeedOfGateway(uint64_t seed, int32_t gateway);
// The stream of the gateway's router over the groups serving `model`, in a fleet where
// they are not every group (a multi-model fleet): its own, apart from the gateway's
// router over every instance and from the other models'.
uint64_t StreamSeedOfGateway(uint64_t seed, int32_t gateway, std::string_view model);

// The key prefix_affinity hashes: the first `prefix_blocks` block hashes, combined;
// nullopt when there are none.
std::optional<uint64_t> PrefixKey(std::span<const uint64_t> block_hashes, int prefix_blocks);

class Router {
 public:
  // `targets` in any order (kept sorted by instance id); `stream_seed` seeds the
  // router's random stream (random, power_of_two).
  Router(RouterConfig config, std::vector<RouteTarget> targets, uint64_t stream_seed);
  ~Router();
  Router(Router&&) noexcept;
  Router& operator=(Router&&) noexcept;

  // Replaces the view with `snapshot` (indexed by global instance id, covering every
  // target) and forgets the assignments made since the last refresh.
  void Refresh(std::span<const InstanceLoad> snapshot);
  // The same as Refresh with the last snapshot updated by `changes` (instances it does
  // not name keep their load; those this router does not target are skipped), at a cost
  // that grows with the changes and the assignments since, not with the fleet: each
  // entry that differs from the last snapshot is updated in place, O(log n) each.
  void Apply(std::span<const LoadChange> changes);
  // The chosen instance's global id; the assignment is added to the view.
  int32_t Route(const RouteRequest& request);
  // Another router of the same gateway sent `request` to `instance`: added to this view
  // too when `instance` is a target here (a gateway has one view, whichever of its
  // routers -- one per model served -- decided).
  void Observe(int32_t instance, const RouteRequest& request);

  const RouterConfig& config() const;

  // The view, the last snapshot, the entries that differ from it and the policy's own
  // state (docs/CHECKPOINT.md); Load into a router built alike.
  void Save(CheckpointWriter& w) const;
  void Load(CheckpointReader& r);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace fleetsim
