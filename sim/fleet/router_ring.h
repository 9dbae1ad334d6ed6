// The consistent-hash ring of the prefix_affinity router (fleet/router.h). Target i owns
// points[i] points; point r of the target with instance id `id` sits at the r-th output of
// a SplitMix64 stream seeded with Mix64(id) -- so a target's points do not depend on the
// other targets, and a target given one more point keeps all the ones it had. A key
// belongs to the first point at or after it, wrapping round; points that collide are
// ordered by instance id.
//
//   HashRing ring(instance_ids, std::vector<int64_t>(instance_ids.size(), 64));
//   int32_t index = ring.Owner(prefix_key);   // index into instance_ids
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace fleetsim::router_internal {

// Where point `replica` of instance `instance` sits on the ring.
uint64_t RingPoint(int32_t instance, int64_t replica);

class HashRing {
 public:
  // `instances` and `points` are parallel; every target gets at least one point.
  HashRing(std::span<const int32_t> instances, std::span<const int64_t> points);

  // The index (into `instances`) of the target owning `key`. O(log points).
  int32_t Owner(uint64_t key) const;
  int64_t num_points() const { return static_cast<int64_t>(hashes_.size()); }

 private:
  std::vector<uint64_t> hashes_;  // sorted
  std::vector<int32_t> owners_;   // parallel to hashes_
};

}  // namespace fleetsim::router_internal
