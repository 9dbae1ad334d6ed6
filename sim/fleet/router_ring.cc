#include "fleet/router_ring.h"

#include <algorithm>
#include <bit>
#include <cstddef>
#include <stdexcept>

#include "core/hash64.h"

namespace fleetsim::router_internal {

uint64_t RingPoint(int32_t instance, int64_t replica) {
  const uint64_t stream_seed = Mix64(static_cast<uint64_t>(static_cast<uint32_t>(instance)));
  return Mix64(stream_seed + (static_cast<uint64_t>(replica) + 1) * kGoldenGamma);
}

HashRing::HashRing(std::span<const int32_t> instances, std::span<const int64_t> points) {
  if (instances.empty() || instances.size() != points.size())
    throw std::invalid_argument("HashRing: needs one point count per target, and a target");
  auto count_of = [&](size_t i) { return std::max<int64_t>(points[i], 1); };
  size_t total = 0;
  for (size_t i = 0; i < instances.size(); ++i)
    total += static_cast<size_t>(count_of(i));
  // The points are uniform, so a counting sort on their top bits leaves buckets of ~16
  // points, each then sorted on its own: far faster than one sort of millions.
  const int bits = std::clamp(static_cast<int>(std::bit_width(total)) - 4, 0, 24);
  const int shift = 64 - bits;
  auto bucket = [&](uint64_t hash) {
    return bits == 0 ? size_t{0} : static_cast<size_t>(hash >> shift);
  };
  std::vector<size_t> start((size_t{1} << bits) + 1, 0);
  for (size_t i = 0; i < instances.size(); ++i)
    for (int64_t r = 0; r < count_of(i); ++r)
      ++start[bucket(RingPoint(instances[i], r)) + 1];
  for (size_t b = 1; b < start.size(); ++b)
    start[b] += start[b - 1];
  hashes_.resize(total);
  owners_.resize(total);
  std::vector<size_t> next(start.begin(), start.end() - 1);
  for (size_t i = 0; i < instances.size(); ++i) {
    for (int64_t r = 0; r < count_of(i); ++r) {
      const uint64_t hash = RingPoint(instances[i], r);
      const size_t at = next[bucket(hash)]++;
      hashes_[at] = hash;
      owners_[at] = static_cast<int32_t>(i);
    }
  }
  // Within a bucket: by hash, then (for points that collide) by instance id.
  struct Point {
    uint64_t hash;
    int32_t instance;
    int32_t owner;
  };
  std::vector<Point> sorting;
  for (size_t b = 0; b + 1 < start.size(); ++b) {
    sorting.clear();
    for (size_t at = start[b]; at < start[b + 1]; ++at)
      sorting.push_back({hashes_[at], instances[static_cast<size_t>(owners_[at])], owners_[at]});
    std::sort(sorting.begin(), sorting.end(), [](const Point& x, const Point& y) {
      return x.hash != y.hash ? x.hash < y.hash : x.instance < y.instance;
    });
    for (size_t k = 0; k < sorting.size(); ++k) {
      hashes_[start[b] + k] = sorting[k].hash;
      owners_[start[b] + k] = sorting[k].owner;
    }
  }
}

int32_t HashRing::Owner(uint64_t key) const {
  auto it = std::lower_bound(hashes_.begin(), hashes_.end(), key);
  if (it == hashes_.end()) return owners_.front();
  return owners_[static_cast<size_t>(it - hashes_.begin())];
}

}  // namespace fleetsim::router_internal
