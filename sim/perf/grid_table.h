// A measured table on a regular grid (every combination of the axis values present),
// read by multilinear interpolation. Past an axis' last point the last segment is
// extended (linear extrapolation; costs grow with tokens and context), below its first
// point the first segment is; such lookups are counted so that a run can report how
// often it left the measured range instead of hiding it.
//
//   GridTable t({{16, 32, 64}, {0, 1024}});          // axes
//   t.Set({1, 0}, 12.5);                              // value at (32, 0)
//   double us = t.Lookup({40.0, 512.0});
#pragma once

#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace fleetsim {

class GridTable {
 public:
  GridTable() = default;
  explicit GridTable(std::vector<std::vector<double>> axes);

  std::size_t rank() const { return axes_.size(); }
  const std::vector<double>& axis(std::size_t i) const { return axes_[i]; }
  bool empty() const { return values_.empty(); }

  // Sets the value at grid indices `index` (one per axis).
  void Set(const std::vector<std::size_t>& index, double value);
  // Sets a value that was derived, not measured.
  void Fill(const std::vector<std::size_t>& index, double value);
  bool IsSet(const std::vector<std::size_t>& index) const;
  // Set from a table row, as opposed to filled in by FillHoles.
  bool IsMeasured(std::size_t flat) const { return measured_[flat]; }
  std::size_t size() const { return values_.size(); }
  // The coordinates and value of the grid point with flat index `flat`.
  std::vector<double> PointAt(std::size_t flat) const;
  double ValueAt(std::size_t flat) const { return values_[flat]; }
  double At(const std::vector<std::size_t>& index) const;
  // The grid point at `index`, as "(x, y, ...)".
  std::string PointText(const std::vector<std::size_t>& index) const;
  // The first grid point without a value, as PointText writes it, or "" when complete.
  std::string FirstMissingPoint() const;
  // Completes a grid that is the union of several sweeps: each hole is interpolated
  // linearly along one axis between the nearest set points on both sides (axes in order,
  // passes repeated while holes get filled); holes left with points on one side only then
  // take the nearest value. Returns the number of points filled.
  int64_t FillHoles();

  // Interpolated value at `point` (one coordinate per axis).
  double Lookup(std::span<const double> point) const;
  double Lookup(std::initializer_list<double> point) const {
    return Lookup(std::span<const double>(point.begin(), point.size()));
  }

  // The interpolated value where `point` lies within every axis and every grid point it
  // weighs has a value (Set or Fill); nullopt elsewhere, without counting a lookup outside.
  std::optional<double> LookupSet(std::span<const double> point) const;

  // Where a coordinate falls on one axis: the bracketing segment [lower, lower + 1], the
  // weight of its upper end, and whether it lies outside the axis' range.
  struct Position {
    std::size_t lower = 0;
    double weight = 0;
    bool outside = false;
  };
  // On a one-axis table, LookupAt(Locate(x)) is exactly Lookup({x}). Tables on the same
  // axis can share one Locate: a step reads a dozen per-token kernels at one token count.
  Position Locate(double x) const { return PositionOn(0, x); }
  double LookupAt(const Position& position) const;
  // Where `x` falls on axis `axis`; `hint` (a position found before on that axis) is tried
  // first, so that a coordinate that moves little costs no search. The same position as
  // a search gives.
  Position LocateOn(std::size_t axis, double x, const Position& hint) const;
  Position LocateOn(std::size_t axis, double x) const { return PositionOn(axis, x); }
  // Lookup at positions found on every axis (one per axis): the same value, bit for bit,
  // and the same count of lookups outside the grid.
  double LookupAt(std::span<const Position> positions) const;
  // The same on a two-axis table, without the span.
  double LookupAt(const Position& first, const Position& second) const;
  // A two-axis table read along its second axis with the first one fixed (a decode run's
  // batch size, its context moving): the first axis' part of the read worked out once, and
  // each read the same as LookupAt(first, second) to the bit -- the same corner weights,
  // products and order -- and counted outside the grid the same way. Valid while the
  // table lives.
  class AlongSecond {
   public:
    AlongSecond() = default;
    AlongSecond(const GridTable& table, const Position& first);
    // LocateOn(1, x, hint).
    Position Locate(double x, const Position& hint) const {
      const std::size_t lo = hint.lower;
      if (lo + 1 < axis_size_ && axis_[lo] <= x && x < axis_[lo + 1])
        return {lo, (x - axis_[lo]) / (axis_[lo + 1] - axis_[lo]), false};
      return table_->PositionOn(1, x);
    }
    double LookupAt(const Position& second) const {
      const double below1 = 1 - second.weight;
      const double* v = row_ + second.lower * stride1_;
      double value = 0;
      // SumTwoAxes' corners, in its order; a corner of weight 0 adds nothing.
      if (const double w = below0_ * below1; w != 0) value += w * v[0];
      if (upper0_) {
        if (const double w = weight0_ * below1; w != 0) value += w * v[stride0_];
      }
      if (upper1_) {
        if (const double w = below0_ * second.weight; w != 0) value += w * v[stride1_];
        if (upper0_) {
          if (const double w = weight0_ * second.weight; w != 0)
            value += w * v[stride0_ + stride1_];
        }
      }
      if (first_outside_ || second.outside) table_->CountOutOfGrid(1);
      return value;
    }

   private:
    const GridTable* table_ = nullptr;
    const double* axis_ = nullptr;  // the second axis
    std::size_t axis_size_ = 0;
    const double* row_ = nullptr;  // the values at the first axis' lower end
    std::size_t stride0_ = 0, stride1_ = 0;
    double weight0_ = 0, below0_ = 1;
    bool upper0_ = false, upper1_ = false, first_outside_ = false;
  };

  // The same value as LookupAt, without counting a lookup (for a caller that reads a value
  // once and counts each reuse).
  double ReadAt(std::span<const Position> positions) const;
  // Counts `n` lookups outside the grid, made by a caller that reuses a value read once.
  void CountOutOfGrid(int64_t n) const {
    out_of_grid_.value.fetch_add(n, std::memory_order_relaxed);
  }
  // The most axes a table may have (lookups keep their work on the stack).
  static constexpr std::size_t kMaxRank = 8;
  int64_t out_of_grid_lookups() const { return out_of_grid_.value.load(std::memory_order_relaxed); }

 private:
  std::size_t Flatten(const std::vector<std::size_t>& index) const;
  std::string PointTextAt(std::size_t flat) const;
  Position PositionOn(std::size_t axis, double x) const;
  // The corner sum at a point, whether the point left an axis' range, and (kNeedSet)
  // whether a corner it weighs has no value.
  struct Reading {
    double value = 0;
    bool outside = false;
    bool unset = false;
  };
  template <bool kNeedSet>
  Reading Read(std::span<const double> point) const;
  // The corner sum of the cell at per-axis `lower` ends and upper-end `weight`s; its parts
  // for two axes and for more, and one corner's term.
  template <bool kNeedSet>
  void SumCorners(const std::size_t* lower, const double* weight, Reading& reading) const;
  template <bool kNeedSet>
  void SumTwoAxes(const std::size_t* lower, const double* weight, Reading& reading) const;
  template <bool kNeedSet>
  void SumManyAxes(const std::size_t* lower, const double* weight, Reading& reading) const;
  template <bool kNeedSet>
  void AddCorner(double w, std::size_t flat, Reading& reading) const;

  std::vector<std::vector<double>> axes_;
  std::vector<std::size_t> strides_;
  std::vector<double> values_;
  std::vector<bool> set_;
  std::vector<bool> measured_;
  // Counted from every thread that looks up (instances of a group share their tables);
  // copies start from the source's count.
  struct Counter {
    std::atomic<int64_t> value{0};
    Counter() = default;
    Counter(const Counter& other) : value(other.value.load(std::memory_order_relaxed)) {}
    Counter& operator=(const Counter& other) {
      value.store(other.value.load(std::memory_order_relaxed), std::memory_order_relaxed);
      return *this;
    }
  };
  mutable Counter out_of_grid_;
};

// Index of `value` on a sorted axis; -1 when absent.
int AxisIndex(const std::vector<double>& axis, double value);

}  // namespace fleetsim
