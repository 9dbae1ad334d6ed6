#include "perf/kernel_db/coordinate_search.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

namespace fleetsim {

void CoordinateSearch::Add(std::string name, double* value, double lo, double hi, bool integral) {
  if (!(lo > 0 && hi > lo)) throw std::invalid_argument("search bounds of " + name);
  *value = std::clamp(*value, lo, hi);
  parameters_.push_back({std::move(name), value, lo, hi, integral});
}

double CoordinateSearch::Minimize(const std::function<double()>& objective) {
  const auto evaluate = [&] {
    ++evaluations_;
    return objective();
  };
  double best = evaluate();
  // Round 0 spans each parameter's whole range (a half-width of log(hi / lo) around the
  // start covers it wherever the start is); later rounds zoom in on the best value.
  std::vector<double> half_width;
  for (const Parameter& p : parameters_)
    half_width.push_back(std::log(p.hi / p.lo));
  const int points = std::max(2, options_.grid_points);
  for (int round = 0; round < options_.rounds; ++round) {
    for (std::size_t i = 0; i < parameters_.size(); ++i) {
      const Parameter& p = parameters_[i];
      const double center = std::log(*p.value);
      const double lo = std::max(std::log(p.lo), center - half_width[i]);
      const double hi = std::min(std::log(p.hi), center + half_width[i]);
      double best_value = *p.value;
      for (int g = 0; g < points; ++g) {
        double v = std::exp(lo + (hi - lo) * g / (points - 1));
        v = std::clamp(p.integral ? std::round(v) : v, p.lo, p.hi);
        if (v == best_value) continue;
        *p.value = v;
        const double score = evaluate();
        if (score < best) {
          best = score;
          best_value = v;
        }
      }
      *p.value = best_value;
      half_width[i] /= options_.shrink;
    }
  }
  return best;
}

}  // namespace fleetsim
