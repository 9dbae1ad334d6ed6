// Order statistics of a small sample: quantiles by linear interpolation between order
// statistics (numpy's default), and the mean.
#pragma once

#include <vector>

namespace fleetsim {

// `sorted` must be sorted ascending; NaN when empty.
double Quantile(const std::vector<double>& sorted, double q);
double Mean(const std::vector<double>& values);

}  // namespace fleetsim
