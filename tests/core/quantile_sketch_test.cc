#include "core/quantile_sketch.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <numbers>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace fleetsim {
namespace {

// Our own distributions over mt19937_64 bits (std::*_distribution differs between
// standard libraries), so the samples are the same everywhere.
double Uniform01(std::mt19937_64& rng) {  // (0, 1]
  return static_cast<double>((rng() >> 11) + 1) * 0x1.0p-53;
}

double StandardNormal(std::mt19937_64& rng) {  // Box-Muller, cosine half
  const double u1 = Uniform01(rng);
  const double u2 = Uniform01(rng);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

std::vector<double> Lognormal(uint64_t seed, std::size_t n) {
  std::mt19937_64 rng(seed);
  std::vector<double> values(n);
  for (double& v : values)
    v = std::exp(-3.0 + 2.0 * StandardNormal(rng));  // about 1e-6 .. 1e2
  return values;
}

std::vector<double> UniformValues(uint64_t seed, std::size_t n) {
  std::mt19937_64 rng(seed);
  std::vector<double> values(n);
  for (double& v : values)
    v = 0.5 + 999.5 * Uniform01(rng);
  return values;
}

std::vector<double> Pareto(uint64_t seed, std::size_t n) {  // alpha 1.1, scale 1e-3
  std::mt19937_64 rng(seed);
  std::vector<double> values(n);
  for (double& v : values)
    v = 1e-3 / std::pow(Uniform01(rng), 1.0 / 1.1);
  return values;
}

// The exact nearest-rank quantile, ranked exactly as the sketch ranks.
double ExactQuantile(const std::vector<double>& sorted, double q) {
  const auto rank =
      static_cast<std::size_t>(std::floor(q * static_cast<double>(sorted.size() - 1)));
  return sorted[rank];
}

QuantileSketch SketchOf(const std::vector<double>& values, double accuracy = 0.005) {
  QuantileSketch sketch(accuracy);
  for (double v : values)
    sketch.Add(v);
  return sketch;
}

void ExpectWithinRelativeError(const std::vector<double>& values, double accuracy) {
  const QuantileSketch sketch = SketchOf(values, accuracy);
  ASSERT_EQ(sketch.count(), static_cast<int64_t>(values.size()));
  std::vector<double> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  double worst = 0;
  for (int k = 0; k <= 1000; ++k) {
    const double q = k / 1000.0;
    const double exact = ExactQuantile(sorted, q);
    const double approx = sketch.Quantile(q);
    const double error = std::fabs(approx - exact) / exact;
    worst = std::max(worst, error);
    // The bound is exact in real arithmetic; allow rounding at bucket boundaries.
    EXPECT_LE(error, accuracy * (1 + 1e-9)) << "q=" << q << " exact=" << exact;
  }
  EXPECT_GT(worst, 0.0);  // the sketch really is approximate (not a copy of the data)
}

void ExpectSameSketch(const QuantileSketch& a, const QuantileSketch& b) {
  EXPECT_EQ(a.count(), b.count());
  EXPECT_EQ(a.ToCounts(), b.ToCounts());
  for (int k = 0; k <= 200; ++k) {
    const double q = k / 200.0;
    EXPECT_EQ(std::bit_cast<uint64_t>(a.Quantile(q)), std::bit_cast<uint64_t>(b.Quantile(q)))
        << "q=" << q;
  }
}

TEST(QuantileSketch, LognormalWithinRelativeError) {
  for (double accuracy : {0.01, 0.005, 0.001}) {
    SCOPED_TRACE("accuracy " + std::to_string(accuracy));
    ExpectWithinRelativeError(Lognormal(11, 100000), accuracy);
  }
}

TEST(QuantileSketch, UniformWithinRelativeError) {
  for (double accuracy : {0.01, 0.005, 0.001}) {
    SCOPED_TRACE("accuracy " + std::to_string(accuracy));
    ExpectWithinRelativeError(UniformValues(22, 100000), accuracy);
  }
}

TEST(QuantileSketch, HeavyTailedWithinRelativeError) {
  for (double accuracy : {0.01, 0.005, 0.001}) {
    SCOPED_TRACE("accuracy " + std::to_string(accuracy));
    ExpectWithinRelativeError(Pareto(33, 100000), accuracy);
  }
}

TEST(QuantileSketch, BucketBoundariesWithinRelativeError) {
  // Values at and next to the bucket edges gamma^i, where rounding matters most.
  const double accuracy = 0.01;
  const double gamma = (1 + accuracy) / (1 - accuracy);
  std::vector<double> values;
  for (int i = -50; i <= 50; ++i) {
    const double edge = std::pow(gamma, i);
    values.push_back(edge);
    values.push_back(std::nextafter(edge, 0.0));
    values.push_back(std::nextafter(edge, 1e300));
  }
  ExpectWithinRelativeError(values, accuracy);
}

TEST(QuantileSketch, SingleValue) {
  QuantileSketch sketch;
  sketch.Add(0.231);
  EXPECT_EQ(sketch.count(), 1);
  for (double q : {0.0, 0.5, 1.0})
    EXPECT_NEAR(sketch.Quantile(q), 0.231, 0.231 * 0.005);
}

TEST(QuantileSketch, ZeroBucket) {
  QuantileSketch sketch(0.01, 1e-6);
  sketch.Add(0.0);
  sketch.Add(-0.0);
  sketch.Add(1e-7);          // below the minimum
  sketch.Add(1e-6 * 0.999);  // just below
  sketch.Add(1.0);
  EXPECT_EQ(sketch.count(), 5);
  EXPECT_EQ(sketch.ToCounts()[0], 4);
  EXPECT_EQ(sketch.Quantile(0.0), 0.0);
  EXPECT_EQ(sketch.Quantile(0.75), 0.0);  // rank 3: still zero
  EXPECT_NEAR(sketch.Quantile(1.0), 1.0, 0.01);

  QuantileSketch at_minimum(0.01, 1e-6);
  at_minimum.Add(1e-6);  // the minimum itself is a real bucket
  EXPECT_EQ(at_minimum.ToCounts()[0], 0);
  EXPECT_NEAR(at_minimum.Quantile(0.5), 1e-6, 1e-6 * 0.01);

  QuantileSketch only_zeros;
  for (int i = 0; i < 10; ++i)
    only_zeros.Add(0.0);
  EXPECT_EQ(only_zeros.Quantile(0.0), 0.0);
  EXPECT_EQ(only_zeros.Quantile(1.0), 0.0);
}

TEST(QuantileSketch, EmptyIsNaN) {
  const QuantileSketch sketch;
  EXPECT_EQ(sketch.count(), 0);
  EXPECT_TRUE(std::isnan(sketch.Quantile(0.0)));
  EXPECT_TRUE(std::isnan(sketch.Quantile(0.5)));
  EXPECT_TRUE(std::isnan(sketch.Quantile(1.0)));

  QuantileSketch merged;
  merged.Merge(sketch);
  merged.AddCounts(sketch.ToCounts());
  EXPECT_EQ(merged.count(), 0);
  EXPECT_TRUE(std::isnan(merged.Quantile(0.99)));
}

TEST(QuantileSketch, MergeEqualsOneSketchWhateverSplitAndOrder) {
  std::vector<double> values = Lognormal(44, 20000);
  const std::vector<double> heavy = Pareto(45, 5000);
  values.insert(values.end(), heavy.begin(), heavy.end());
  for (int i = 0; i < 500; ++i)
    values.push_back(0.0);
  values.push_back(5e7);  // above kMaxValue
  const QuantileSketch whole = SketchOf(values);

  // Split the values into `parts` sketches by a rule; merge in several orders.
  const auto split = [&](std::size_t parts,
                         const std::function<std::size_t(std::size_t)>& part_of) {
    std::vector<QuantileSketch> sketches(parts);
    for (std::size_t i = 0; i < values.size(); ++i)
      sketches[part_of(i)].Add(values[i]);
    return sketches;
  };
  std::mt19937_64 rng(46);
  std::vector<std::size_t> random_part(values.size());
  for (std::size_t& p : random_part)
    p = static_cast<std::size_t>(rng() % 7);

  const std::vector<std::vector<QuantileSketch>> splits = {
      split(1, [](std::size_t) { return std::size_t{0}; }),
      split(4, [&](std::size_t i) { return i * 4 / values.size(); }),  // contiguous
      split(5, [](std::size_t i) { return i % 5; }),                   // round robin
      split(7, [&](std::size_t i) { return random_part[i]; }),
  };
  for (const auto& parts : splits) {
    SCOPED_TRACE(std::to_string(parts.size()) + " parts");
    QuantileSketch forward;
    for (const auto& part : parts)
      forward.Merge(part);
    ExpectSameSketch(forward, whole);

    QuantileSketch backward;
    for (auto it = parts.rbegin(); it != parts.rend(); ++it)
      backward.Merge(*it);
    ExpectSameSketch(backward, whole);

    // Pairwise tree, as a reduction over ranks would do it.
    std::vector<QuantileSketch> level = parts;
    while (level.size() > 1) {
      std::vector<QuantileSketch> next;
      for (std::size_t i = 0; i < level.size(); i += 2) {
        next.push_back(level[i]);
        if (i + 1 < level.size()) next.back().Merge(level[i + 1]);
      }
      level = next;
    }
    ExpectSameSketch(level[0], whole);
  }
}

TEST(QuantileSketch, MergingEmptySketchesChangesNothing) {
  const std::vector<double> values = Lognormal(48, 2000);
  const QuantileSketch full = SketchOf(values);

  QuantileSketch into_full = full;  // empty into full
  into_full.Merge(QuantileSketch());
  ExpectSameSketch(into_full, full);

  QuantileSketch into_empty;  // full into empty
  into_empty.Merge(full);
  ExpectSameSketch(into_empty, full);

  // An empty sketch in the middle of a chain of merges is invisible too.
  QuantileSketch chain;
  chain.Merge(QuantileSketch());
  chain.Merge(SketchOf({values.begin(), values.begin() + 1000}));
  chain.Merge(QuantileSketch());
  chain.Merge(SketchOf({values.begin() + 1000, values.end()}));
  ExpectSameSketch(chain, full);
}

// Sketches whose buckets do not overlap (one below the other, and one holding only zeros)
// merge to the sketch of both streams whichever is merged into which: the receiving
// sketch's buckets grow downwards as well as upwards.
TEST(QuantileSketch, MergingDisjointRangesInEitherOrderEqualsOneSketch) {
  std::vector<double> low, high, zeros(50, 0.0);
  for (int i = 1; i <= 300; ++i) {
    low.push_back(1e-6 * i);
    high.push_back(1e3 * i);
  }
  std::vector<double> all = low;
  all.insert(all.end(), high.begin(), high.end());
  all.insert(all.end(), zeros.begin(), zeros.end());
  const QuantileSketch whole = SketchOf(all);

  const std::vector<std::vector<double>*> parts{&low, &high, &zeros};
  const std::vector<std::vector<int>> orders{{0, 1, 2}, {1, 0, 2}, {2, 1, 0}, {1, 2, 0}};
  for (const std::vector<int>& order : orders) {
    SCOPED_TRACE(std::to_string(order[0]) + std::to_string(order[1]) + std::to_string(order[2]));
    QuantileSketch merged = SketchOf(*parts[static_cast<std::size_t>(order[0])]);
    merged.Merge(SketchOf(*parts[static_cast<std::size_t>(order[1])]));
    merged.Merge(SketchOf(*parts[static_cast<std::size_t>(order[2])]));
    ExpectSameSketch(merged, whole);
  }
  // The merged quantiles are the whole stream's: of 650 values, rank floor(0.5 x 649) =
  // 324 is the 275th low one (after 50 zeros), 2.75e-4; the largest is 3e5 (within 0.5 %).
  QuantileSketch merged = SketchOf(high);
  merged.Merge(SketchOf(low));
  merged.Merge(SketchOf(zeros));
  EXPECT_NEAR(merged.Quantile(0.5), 2.75e-4, 2.75e-4 * 0.005);
  EXPECT_NEAR(merged.Quantile(1.0), 3e5, 3e5 * 0.005);
  EXPECT_EQ(merged.Quantile(0.0), 0.0);
}

TEST(QuantileSketch, MergeWithItselfDoubles) {
  const std::vector<double> values = UniformValues(47, 1000);
  QuantileSketch sketch = SketchOf(values);
  sketch.Merge(sketch);
  std::vector<double> twice = values;
  twice.insert(twice.end(), values.begin(), values.end());
  ExpectSameSketch(sketch, SketchOf(twice));
}

TEST(QuantileSketch, CountsRoundTrip) {
  std::vector<double> values = Lognormal(55, 10000);
  values.push_back(0.0);
  values.push_back(1e9);
  const QuantileSketch sketch = SketchOf(values);
  const std::vector<int64_t> counts = sketch.ToCounts();

  // Same length for every sketch with the same parameters, empty or not.
  EXPECT_EQ(counts.size(), QuantileSketch().ToCounts().size());
  EXPECT_NE(counts.size(), QuantileSketch(0.01).ToCounts().size());
  EXPECT_NE(counts.size(), QuantileSketch(0.005, 1e-6).ToCounts().size());
  int64_t total = 0;
  for (int64_t c : counts)
    total += c;
  EXPECT_EQ(total, sketch.count());

  QuantileSketch restored;
  restored.AddCounts(counts);
  ExpectSameSketch(restored, sketch);
}

TEST(QuantileSketch, SummedCountsEqualMerge) {
  // What MPI_SUM over the dense form does on several ranks.
  const QuantileSketch a = SketchOf(Lognormal(56, 3000));
  const QuantileSketch b = SketchOf(UniformValues(57, 3000));
  const QuantileSketch c = SketchOf(Pareto(58, 3000));
  std::vector<int64_t> sum = a.ToCounts();
  for (const QuantileSketch* s : {&b, &c}) {
    const std::vector<int64_t> counts = s->ToCounts();
    for (std::size_t i = 0; i < sum.size(); ++i)
      sum[i] += counts[i];
  }
  QuantileSketch reduced;
  reduced.AddCounts(sum);

  QuantileSketch merged = a;
  merged.Merge(b);
  merged.Merge(c);
  ExpectSameSketch(reduced, merged);

  QuantileSketch added_twice = a;  // AddCounts merges into what is there
  added_twice.AddCounts(a.ToCounts());
  QuantileSketch doubled = a;
  doubled.Merge(a);
  ExpectSameSketch(added_twice, doubled);
}

TEST(QuantileSketch, ValuesAboveMaxClampIntoLastBucket) {
  QuantileSketch at_max;
  at_max.Add(QuantileSketch::kMaxValue);

  QuantileSketch above;
  above.Add(QuantileSketch::kMaxValue * 10);
  above.Add(1e300);
  above.Add(std::numeric_limits<double>::infinity());
  EXPECT_EQ(above.count(), 3);
  const std::vector<int64_t> counts = above.ToCounts();
  EXPECT_EQ(counts.back(), 3);
  EXPECT_EQ(counts, [&] {
    QuantileSketch three;
    three.AddCounts(at_max.ToCounts());
    three.AddCounts(at_max.ToCounts());
    three.AddCounts(at_max.ToCounts());
    return three.ToCounts();
  }());
  EXPECT_EQ(above.Quantile(0.0), at_max.Quantile(0.0));
  EXPECT_EQ(above.Quantile(1.0), at_max.Quantile(1.0));
  EXPECT_NEAR(above.Quantile(1.0), QuantileSketch::kMaxValue, QuantileSketch::kMaxValue * 0.005);
}

TEST(QuantileSketch, RejectsBadInput) {
  EXPECT_THROW(QuantileSketch(0.0), std::invalid_argument);
  EXPECT_THROW(QuantileSketch(1.0), std::invalid_argument);
  EXPECT_THROW(QuantileSketch(-0.1), std::invalid_argument);
  EXPECT_THROW(QuantileSketch(std::nan("")), std::invalid_argument);
  EXPECT_THROW(QuantileSketch(0.005, 0.0), std::invalid_argument);
  EXPECT_THROW(QuantileSketch(0.005, -1.0), std::invalid_argument);
  EXPECT_THROW(QuantileSketch(0.005, QuantileSketch::kMaxValue), std::invalid_argument);
  EXPECT_THROW(QuantileSketch(1e-9), std::invalid_argument);  // billions of buckets

  QuantileSketch sketch;
  EXPECT_THROW(sketch.Add(-1.0), std::invalid_argument);
  EXPECT_THROW(sketch.Add(-std::numeric_limits<double>::infinity()), std::invalid_argument);
  EXPECT_THROW(sketch.Add(std::nan("")), std::invalid_argument);
  EXPECT_EQ(sketch.count(), 0);

  EXPECT_THROW(sketch.Quantile(-0.01), std::invalid_argument);  // even when empty
  sketch.Add(1.0);
  EXPECT_THROW(sketch.Quantile(1.01), std::invalid_argument);
  EXPECT_THROW(sketch.Quantile(std::nan("")), std::invalid_argument);

  EXPECT_THROW(sketch.Merge(QuantileSketch(0.01)), std::invalid_argument);
  EXPECT_THROW(sketch.Merge(QuantileSketch(0.005, 1e-6)), std::invalid_argument);

  std::vector<int64_t> counts = sketch.ToCounts();
  const std::vector<int64_t> before = counts;
  counts.push_back(0);
  EXPECT_THROW(sketch.AddCounts(counts), std::invalid_argument);
  EXPECT_THROW(sketch.AddCounts(QuantileSketch(0.01).ToCounts()), std::invalid_argument);
  counts.pop_back();
  counts[0] = 5;
  counts[counts.size() / 2] = -1;
  EXPECT_THROW(sketch.AddCounts(counts), std::invalid_argument);
  EXPECT_EQ(sketch.ToCounts(), before);  // a rejected vector changes nothing
  EXPECT_EQ(sketch.count(), 1);
}

}  // namespace
}  // namespace fleetsim
