// A router's load view and the orders its load-based policies choose by (fleet/router.h).
// Targets are indexed by their position in instance-id order, so "lower index" is "lower
// instance id" everywhere. Every comparison is exact integer arithmetic: no rounding, no
// dependence on evaluation order.
//
//   LoadView view = ...;
//   ArgBestTree<FewerOutstanding> tree(view.size(), FewerOutstanding{&view});
//   int32_t index = tree.Best();   // least outstanding, ties to the lower index
//   ++view.outstanding[index];
//   tree.Update(index);            // O(log n)
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "fleet/router.h"

namespace fleetsim::router_internal {

// 128 bits for exact cross-multiplied comparisons (a product of three 40-bit terms).
__extension__ typedef unsigned __int128 U128;

// Integer capacity weights: capacity / min capacity x kWeightScale, rounded, in
// [1, kMaxWeight]. Quantized to 0.1% of the smallest instance's capacity.
inline constexpr double kWeightScale = 1000.0;
inline constexpr uint64_t kMaxWeight = uint64_t{1} << 40;
// Bounds pool sizes so that (blocks + 1) x pool x weight fits in 128 bits.
inline constexpr int64_t kMaxPoolBlocks = int64_t{1} << 40;

struct LoadView {
  std::vector<RouteTarget> targets;  // sorted by instance id
  std::vector<uint64_t> weights;     // integer capacity weights, as above
  // The snapshot plus the router's own assignments since.
  std::vector<int64_t> outstanding;
  std::vector<int64_t> kv_used;

  int32_t size() const { return static_cast<int32_t>(targets.size()); }
  uint64_t Outstanding(int32_t i) const { return Count(outstanding, i); }
  uint64_t KvUsed(int32_t i) const { return Count(kv_used, i); }
  uint64_t Weight(int32_t i) const { return weights[static_cast<size_t>(i)]; }
  uint64_t PoolBlocks(int32_t i) const {
    return static_cast<uint64_t>(targets[static_cast<size_t>(i)].pool_blocks);
  }

 private:
  static uint64_t Count(const std::vector<int64_t>& counts, int32_t i) {
    return static_cast<uint64_t>(counts[static_cast<size_t>(i)]);  // never negative
  }
};

// "a is strictly less loaded than b" for each load-based policy; ties are left to the
// caller (which prefers the lower index).

// outstanding
struct FewerOutstanding {
  const LoadView* view;
  bool operator()(int32_t a, int32_t b) const {
    return view->Outstanding(a) < view->Outstanding(b);
  }
};

// (outstanding + 1) / capacity: the +1 makes an idle big instance beat an idle small one.
struct FewerWeightedOutstanding {
  const LoadView* view;
  bool operator()(int32_t a, int32_t b) const {
    return U128{view->Outstanding(a) + 1} * view->Weight(b) <
           U128{view->Outstanding(b) + 1} * view->Weight(a);
  }
};

// kv_used / pool_blocks
struct LowerKvUsage {
  const LoadView* view;
  bool operator()(int32_t a, int32_t b) const {
    return U128{view->KvUsed(a)} * view->PoolBlocks(b) <
           U128{view->KvUsed(b)} * view->PoolBlocks(a);
  }
};

// (kv_used + 1) / (pool_blocks x capacity)
struct LowerWeightedKvUsage {
  const LoadView* view;
  bool operator()(int32_t a, int32_t b) const {
    return U128{view->KvUsed(a) + 1} * view->PoolBlocks(b) * view->Weight(b) <
           U128{view->KvUsed(b) + 1} * view->PoolBlocks(a) * view->Weight(a);
  }
};

// A tournament (segment) tree over indices [0, n): Best() is the index that `less` ranks
// first, ties to the lower index. Build is O(n), Update after one index's key changed is
// O(log n), and stops early where the change no longer moves a winner.
template <typename Less>
class ArgBestTree {
 public:
  ArgBestTree(int32_t n, Less less) : less_(less), n_(n) {
    while (leaves_ < static_cast<size_t>(n))
      leaves_ *= 2;
    node_.assign(2 * leaves_, -1);
    Build();
  }

  void Build() {
    for (int32_t i = 0; i < n_; ++i)
      node_[leaves_ + static_cast<size_t>(i)] = i;
    for (size_t k = leaves_ - 1; k >= 1; --k)
      node_[k] = Pick(node_[2 * k], node_[2 * k + 1]);
  }

  // After index's key changed. Several keys may change before their Updates, each
  // changed index getting one. The walk up stops at a node whose winner stays the same
  // and is another index: that winner's key did not change (or its own Update carries
  // it), so nothing above depends on this change.
  void Update(int32_t index) {
    for (size_t k = (leaves_ + static_cast<size_t>(index)) / 2; k >= 1; k /= 2) {
      const int32_t best = Pick(node_[2 * k], node_[2 * k + 1]);
      if (best == node_[k] && best != index) return;
      node_[k] = best;
    }
  }

  int32_t Best() const { return node_[1]; }

 private:
  // `left` holds lower indices than `right`, so a tie keeps `left`.
  int32_t Pick(int32_t left, int32_t right) const {
    if (right < 0) return left;
    if (left < 0) return right;
    return less_(right, left) ? right : left;
  }

  Less less_;
  int32_t n_;
  size_t leaves_ = 1;
  std::vector<int32_t> node_;  // 1-based heap layout; -1 marks an empty leaf
};

}  // namespace fleetsim::router_internal
