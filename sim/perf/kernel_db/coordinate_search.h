// A deterministic minimizer for a handful of positive parameters: coordinate descent over
// log-spaced grids that narrow round by round. No randomness and a fixed number of
// evaluations, so the same objective always yields the same parameters, bit for bit.
//
//   double a = 0.5, b = 10;
//   CoordinateSearch search({.rounds = 4, .grid_points = 13});
//   search.Add("a", &a, 0.05, 1.0);
//   search.Add("b", &b, 1, 4096, /*integral=*/true);
//   double best = search.Minimize([&] { return Loss(a, b); });
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace fleetsim {

struct CoordinateSearchOptions {
  int rounds = 4;        // passes over all parameters
  int grid_points = 13;  // values tried per parameter and pass (the current one besides)
  // Each pass narrows a parameter's window (in log space) by this factor around its best.
  double shrink = 3;
};

class CoordinateSearch {
 public:
  explicit CoordinateSearch(CoordinateSearchOptions options = {}) : options_(options) {}

  // `value` is read as the start and written with the best value found, within [lo, hi];
  // an integral parameter is rounded to whole numbers.
  void Add(std::string name, double* value, double lo, double hi, bool integral = false);

  // Minimizes `objective` (which reads the parameters through their pointers); returns
  // its value at the parameters left in place. Ties keep the earlier value.
  double Minimize(const std::function<double()>& objective);

  int evaluations() const { return evaluations_; }

 private:
  struct Parameter {
    std::string name;
    double* value;
    double lo;
    double hi;
    bool integral;
  };

  CoordinateSearchOptions options_;
  std::vector<Parameter> parameters_;
  int evaluations_ = 0;
};

}  // namespace fleetsim
