// Smooth weighted round robin, exactly nginx's algorithm (ngx_http_upstream_get_peer):
// each pick adds every item's weight to its current weight, takes the item with the
// largest current weight (ties to the lower index, as nginx's strict `>` scan does) and
// subtracts the total weight from it. Over any cycle of sum(weights) picks item i comes up
// weights[i] times, interleaved rather than in runs.
//
// nginx scans every item per pick, O(n). Here the current weights are lines in the step
// number (w_i x step + base_i), kept in a kinetic tournament tree: each node knows its
// winner and the first step at which that could change, so a pick costs O(log n) plus the
// overtakes that really happen. Integer arithmetic throughout: the order is nginx's, bit
// for bit.
//
//   SmoothWeightedRoundRobin wrr({1, 2, 3});
//   wrr.Next();  // 2, then 1, 0, 2, 1, 2, and again
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/checkpoint_io.h"

namespace fleetsim::router_internal {

class SmoothWeightedRoundRobin {
 public:
  // Every weight >= 1; their sum below 2^62.
  explicit SmoothWeightedRoundRobin(std::vector<uint64_t> weights);

  // The next item's index.
  int32_t Next();
  // The current weights (everything the next picks depend on); Load re-bases on them.
  void Save(CheckpointWriter& w) const;
  void Load(CheckpointReader& r);

 private:
  __extension__ typedef __int128 Wide;

  // Item i's current weight at step_ of this epoch.
  Wide Current(int32_t i) const;
  // Whether a picks before b now.
  bool Beats(int32_t a, int32_t b) const;
  // The first step after step_ at which `loser` beats `winner`, or kNever.
  int64_t Overtake(int32_t winner, int32_t loser) const;
  void Combine(size_t node);
  // Recomputes the nodes under `node` whose certificates have expired.
  void Repair(size_t node);
  // Starts a new epoch: base_ becomes the current weights and step_ 0.
  void Rebase();

  std::vector<int64_t> weights_;
  std::vector<Wide> base_;  // current weights at step 0 of the epoch (down to -total x weight)
  int64_t total_ = 0;
  int64_t step_ = 0;  // picks since the epoch began
  size_t leaves_ = 1;
  std::vector<int32_t> winner_;  // per node; -1 for an empty leaf
  std::vector<int64_t> expiry_;  // per node: first step at which its subtree's order may change
};

}  // namespace fleetsim::router_internal
