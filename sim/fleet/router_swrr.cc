#include "fleet/router_swrr.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <stdexcept>

namespace fleetsim::router_internal {
namespace {

constexpr int64_t kNever = std::numeric_limits<int64_t>::max();

}  // namespace

SmoothWeightedRoundRobin::SmoothWeightedRoundRobin(std::vector<uint64_t> weights) {
  if (weights.empty()) throw std::invalid_argument("SmoothWeightedRoundRobin: no items");
  // Scaling every weight by the same factor scales every current weight by it, so the
  // order is the same; dividing by the gcd keeps the cycle (and the numbers) short.
  uint64_t gcd = 0;
  for (uint64_t w : weights)
    gcd = std::gcd(gcd, w);
  if (gcd == 0) throw std::invalid_argument("SmoothWeightedRoundRobin: weights must be >= 1");
  uint64_t total = 0;
  for (uint64_t w : weights) {
    if (w == 0) throw std::invalid_argument("SmoothWeightedRoundRobin: weights must be >= 1");
    total += w / gcd;
    if (total >= (uint64_t{1} << 62))
      throw std::invalid_argument("SmoothWeightedRoundRobin: weights sum past 2^62");
    weights_.push_back(static_cast<int64_t>(w / gcd));
  }
  total_ = static_cast<int64_t>(total);
  base_.assign(weights_.size(), 0);
  while (leaves_ < weights_.size())
    leaves_ *= 2;
  winner_.assign(2 * leaves_, -1);
  expiry_.assign(2 * leaves_, kNever);
  Rebase();
}

int32_t SmoothWeightedRoundRobin::Next() {
  ++step_;  // every current weight grows by its weight
  if (expiry_[1] <= step_) Repair(1);
  const int32_t chosen = winner_[1];
  base_[static_cast<size_t>(chosen)] -= total_;
  for (size_t k = (leaves_ + static_cast<size_t>(chosen)) / 2; k >= 1; k /= 2)
    Combine(k);
  // After a whole cycle the current weights are back where the epoch began (nginx's
  // cycle property); re-basing keeps step_ x weight small, whether or not they are.
  if (step_ == total_) Rebase();
  return chosen;
}

void SmoothWeightedRoundRobin::Save(CheckpointWriter& w) const {
  w.U64(weights_.size());
  for (size_t i = 0; i < weights_.size(); ++i)
    w.Pod(Current(static_cast<int32_t>(i)));
}

void SmoothWeightedRoundRobin::Load(CheckpointReader& r) {
  r.Require(r.U64() == weights_.size(), "weighted round-robin size");
  for (Wide& base : base_)
    base = r.Pod<Wide>();
  step_ = 0;
  Rebase();  // step 0 of a new epoch at the saved weights: the same order from here
}

SmoothWeightedRoundRobin::Wide SmoothWeightedRoundRobin::Current(int32_t i) const {
  const auto index = static_cast<size_t>(i);
  return Wide{step_} * weights_[index] + base_[index];
}

bool SmoothWeightedRoundRobin::Beats(int32_t a, int32_t b) const {
  const Wide ca = Current(a);
  const Wide cb = Current(b);
  return ca > cb || (ca == cb && a < b);
}

int64_t SmoothWeightedRoundRobin::Overtake(int32_t winner, int32_t loser) const {
  const int64_t gain = weights_[static_cast<size_t>(loser)] - weights_[static_cast<size_t>(winner)];
  if (gain <= 0) return kNever;  // the winner grows at least as fast: it stays ahead
  // loser - winner at step s is gain x s - gap; the loser wins once that is > 0, or == 0
  // when it has the lower index.
  const Wide gap = base_[static_cast<size_t>(winner)] - base_[static_cast<size_t>(loser)];
  // gap >= 0 while `winner` leads at step_ >= 0, so the divisions round as written.
  Wide step = loser < winner ? (gap + gain - 1) / gain  // first s with gain x s >= gap
                             : gap / gain + 1;          // first s with gain x s > gap
  step = std::max(step, Wide{step_} + 1);
  return step >= Wide{kNever} ? kNever : static_cast<int64_t>(step);
}

void SmoothWeightedRoundRobin::Combine(size_t node) {
  const int32_t left = winner_[2 * node];
  const int32_t right = winner_[2 * node + 1];
  int64_t own = kNever;
  if (right < 0) {
    winner_[node] = left;
  } else if (left < 0) {
    winner_[node] = right;
  } else {
    const bool right_wins = Beats(right, left);
    winner_[node] = right_wins ? right : left;
    own = right_wins ? Overtake(right, left) : Overtake(left, right);
  }
  expiry_[node] = std::min({own, expiry_[2 * node], expiry_[2 * node + 1]});
}

void SmoothWeightedRoundRobin::Repair(size_t node) {
  if (node >= leaves_) return;
  if (expiry_[2 * node] <= step_) Repair(2 * node);
  if (expiry_[2 * node + 1] <= step_) Repair(2 * node + 1);
  Combine(node);
}

void SmoothWeightedRoundRobin::Rebase() {
  for (size_t i = 0; i < weights_.size(); ++i) {
    base_[i] = Current(static_cast<int32_t>(i));
    winner_[leaves_ + i] = static_cast<int32_t>(i);
  }
  step_ = 0;
  for (size_t k = leaves_ - 1; k >= 1; --k)
    Combine(k);
}

}  // namespace fleetsim::router_internal
