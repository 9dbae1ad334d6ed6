#include "perf/grid_table.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>

#include "core/check.h"

namespace fleetsim {

int AxisIndex(const std::vector<double>& axis, double value) {
  auto it = std::lower_bound(axis.begin(), axis.end(), value);
  return it != axis.end() && *it == value ? static_cast<int>(it - axis.begin()) : -1;
}

GridTable::GridTable(std::vector<std::vector<double>> axes) : axes_(std::move(axes)) {
  strides_.assign(axes_.size(), 1);
  std::size_t size = 1;
  for (std::size_t i = axes_.size(); i-- > 0;) {
    strides_[i] = size;
    size *= axes_[i].size();
  }
  values_.assign(size, 0.0);
  set_.assign(size, false);
  measured_.assign(size, false);
}

std::size_t GridTable::Flatten(const std::vector<std::size_t>& index) const {
  std::size_t flat = 0;
  for (std::size_t i = 0; i < index.size(); ++i)
    flat += index[i] * strides_[i];
  return flat;
}

void GridTable::Set(const std::vector<std::size_t>& index, double value) {
  values_[Flatten(index)] = value;
  set_[Flatten(index)] = true;
  measured_[Flatten(index)] = true;
}

void GridTable::Fill(const std::vector<std::size_t>& index, double value) {
  values_[Flatten(index)] = value;
  set_[Flatten(index)] = true;
}

std::vector<double> GridTable::PointAt(std::size_t flat) const {
  std::vector<double> point(axes_.size());
  for (std::size_t i = 0; i < axes_.size(); ++i)
    point[i] = axes_[i][flat / strides_[i] % axes_[i].size()];
  return point;
}

bool GridTable::IsSet(const std::vector<std::size_t>& index) const {
  return set_[Flatten(index)];
}

double GridTable::At(const std::vector<std::size_t>& index) const {
  return values_[Flatten(index)];
}

std::string GridTable::PointTextAt(std::size_t flat) const {
  std::string text = "(";
  for (std::size_t i = 0; i < axes_.size(); ++i) {
    const std::size_t index = flat / strides_[i] % axes_[i].size();
    const double x = axes_[i][index];
    text += (i == 0 ? "" : ", ") + std::to_string(static_cast<int64_t>(std::llround(x)));
  }
  return text + ")";
}

std::string GridTable::PointText(const std::vector<std::size_t>& index) const {
  return PointTextAt(Flatten(index));
}

std::string GridTable::FirstMissingPoint() const {
  for (std::size_t flat = 0; flat < set_.size(); ++flat) {
    if (!set_[flat]) return PointTextAt(flat);
  }
  return "";
}

int64_t GridTable::FillHoles() {
  int64_t filled = 0;
  for (bool one_sided : {false, true}) {
    bool progress = true;
    while (progress) {
      progress = false;
      for (std::size_t a = 0; a < axes_.size(); ++a) {
        const std::vector<bool> known = set_;  // a pass reads only what was set before it
        const std::size_t n = axes_[a].size();
        for (std::size_t flat = 0; flat < values_.size(); ++flat) {
          if (known[flat]) continue;
          const std::size_t pos = flat / strides_[a] % n;
          const std::size_t base = flat - pos * strides_[a];
          std::optional<std::size_t> lo, hi;
          for (std::size_t i = pos; i-- > 0;) {
            if (known[base + i * strides_[a]]) {
              lo = i;
              break;
            }
          }
          for (std::size_t i = pos + 1; i < n; ++i) {
            if (known[base + i * strides_[a]]) {
              hi = i;
              break;
            }
          }
          double value = 0;
          if (lo && hi) {
            const double x0 = axes_[a][*lo], x1 = axes_[a][*hi], x = axes_[a][pos];
            const double v0 = values_[base + *lo * strides_[a]];
            const double v1 = values_[base + *hi * strides_[a]];
            value = v0 + (x - x0) / (x1 - x0) * (v1 - v0);
          } else if (one_sided && (lo || hi)) {
            value = values_[base + (lo ? *lo : *hi) * strides_[a]];
          } else {
            continue;
          }
          values_[flat] = value;
          set_[flat] = true;
          ++filled;
          progress = true;
        }
      }
      if (one_sided && progress) break;  // back to two-sided filling after one nearest pass
    }
    if (one_sided && FirstMissingPoint().empty()) break;
  }
  return filled;
}

GridTable::Position GridTable::PositionOn(std::size_t i, double x) const {
  const std::vector<double>& axis = axes_[i];
  if (axis.size() == 1) return {0, 0, x != axis[0]};
  std::size_t hi =
      static_cast<std::size_t>(std::upper_bound(axis.begin(), axis.end(), x) - axis.begin());
  const bool outside = x < axis.front() || x > axis.back();
  hi = std::clamp<std::size_t>(hi, 1, axis.size() - 1);
  return {hi - 1, (x - axis[hi - 1]) / (axis[hi] - axis[hi - 1]), outside};
}

// The corner sum of Lookup for one axis, term by term, so that the two agree to the bit.
double GridTable::LookupAt(const Position& position) const {
  FLEETSIM_CHECK(axes_.size() == 1, "a position on one axis reads a one-axis table");
  if (position.outside) out_of_grid_.value.fetch_add(1, std::memory_order_relaxed);
  double value = 0;
  const double below = 1 - position.weight;
  if (below != 0) value += below * values_[position.lower];
  if (position.weight != 0) value += position.weight * values_[position.lower + 1];
  return value;
}

GridTable::AlongSecond::AlongSecond(const GridTable& table, const Position& first)
    : table_(&table),
      axis_(table.axes_.at(1).data()),
      axis_size_(table.axes_[1].size()),
      row_(table.values_.data() + first.lower * table.strides_[0]),
      stride0_(table.strides_[0]),
      stride1_(table.strides_[1]),
      weight0_(first.weight),
      below0_(1 - first.weight),
      upper0_(table.axes_[0].size() > 1),
      upper1_(table.axes_[1].size() > 1),
      first_outside_(first.outside) {
  FLEETSIM_CHECK(table.axes_.size() == 2, "a read along the second axis is of a two-axis table");
}

GridTable::Position GridTable::LocateOn(std::size_t i, double x, const Position& hint) const {
  const std::vector<double>& axis = axes_[i];
  // Inside the hinted segment, upper_bound would find its upper end: the same position.
  if (hint.lower + 1 < axis.size() && axis[hint.lower] <= x && x < axis[hint.lower + 1]) {
    return {hint.lower, (x - axis[hint.lower]) / (axis[hint.lower + 1] - axis[hint.lower]), false};
  }
  return PositionOn(i, x);
}

template <bool kNeedSet>
void GridTable::AddCorner(double w, std::size_t flat, Reading& reading) const {
  if (w == 0) return;
  reading.value += w * values_[flat];
  if constexpr (kNeedSet) reading.unset = reading.unset || !set_[flat];
}

// Tables of one and two axes -- nearly every read -- are summed unrolled (this and
// SumCorners): the same corners, weights and order as SumManyAxes, so the same value bit
// for bit.
template <bool kNeedSet>
void GridTable::SumTwoAxes(const std::size_t* lower, const double* weight, Reading& reading) const {
  const bool upper0 = axes_[0].size() > 1;
  const bool upper1 = axes_[1].size() > 1;
  const double below0 = 1 - weight[0];
  const double below1 = 1 - weight[1];
  const std::size_t flat0 = lower[0] * strides_[0];
  const std::size_t flat1 = lower[1] * strides_[1];
  AddCorner<kNeedSet>(below0 * below1, flat0 + flat1, reading);
  if (upper0) AddCorner<kNeedSet>(weight[0] * below1, flat0 + strides_[0] + flat1, reading);
  if (upper1) AddCorner<kNeedSet>(below0 * weight[1], flat0 + flat1 + strides_[1], reading);
  if (upper0 && upper1) {
    AddCorner<kNeedSet>(weight[0] * weight[1], flat0 + strides_[0] + flat1 + strides_[1], reading);
  }
}

// Kept out of line: its 4 KB of corner weights stay off the frame of the common reads.
template <bool kNeedSet>
[[gnu::noinline]] void GridTable::SumManyAxes(const std::size_t* lower, const double* weight,
                                              Reading& reading) const {
  // Sum over the 2^rank corners of the cell in mask order (bit i set: the upper end on axis
  // i), each corner's weight the product of its axes' factors taken from axis 0 up. The
  // products are built axis by axis, each prefix once: corner m's weight after axis i is
  // corner m's after axis i - 1 times axis i's factor, the same product, rounded the same.
  // An axis of one point has no upper end: its corners weigh 0 and are skipped.
  std::array<double, std::size_t{1} << kMaxRank> w;
  std::array<std::size_t, std::size_t{1} << kMaxRank> flat;
  w[0] = 1;
  flat[0] = 0;
  std::size_t corners = 1;
  for (std::size_t i = 0; i < axes_.size(); ++i) {
    const double below = 1 - weight[i];
    const double above = axes_[i].size() == 1 ? 0.0 : weight[i];
    const std::size_t at = lower[i] * strides_[i];
    for (std::size_t m = 0; m < corners; ++m) {
      w[corners + m] = w[m] * above;
      flat[corners + m] = flat[m] + at + strides_[i];
      w[m] *= below;
      flat[m] += at;
    }
    corners *= 2;
  }
  for (std::size_t mask = 0; mask < corners; ++mask)
    AddCorner<kNeedSet>(w[mask], flat[mask], reading);
}

template <bool kNeedSet>
void GridTable::SumCorners(const std::size_t* lower, const double* weight, Reading& reading) const {
  if (axes_.size() == 1) {
    AddCorner<kNeedSet>(1 - weight[0], lower[0] * strides_[0], reading);
    if (axes_[0].size() > 1) AddCorner<kNeedSet>(weight[0], (lower[0] + 1) * strides_[0], reading);
  } else if (axes_.size() == 2) {
    SumTwoAxes<kNeedSet>(lower, weight, reading);
  } else {
    SumManyAxes<kNeedSet>(lower, weight, reading);
  }
}

template <bool kNeedSet>
GridTable::Reading GridTable::Read(std::span<const double> point) const {
  FLEETSIM_CHECK(point.size() == axes_.size() && axes_.size() <= kMaxRank,
                 "a point has one coordinate per axis of the table");
  // Per axis: the bracketing segment [lo, lo+1] and the weight of lo+1.
  std::array<std::size_t, kMaxRank> lower{};
  std::array<double, kMaxRank> weight{};
  Reading reading;
  for (std::size_t i = 0; i < axes_.size(); ++i) {
    const Position p = PositionOn(i, point[i]);
    lower[i] = p.lower;
    weight[i] = p.weight;
    reading.outside = reading.outside || p.outside;
  }
  SumCorners<kNeedSet>(lower.data(), weight.data(), reading);
  return reading;
}

double GridTable::ReadAt(std::span<const Position> positions) const {
  FLEETSIM_CHECK(positions.size() == axes_.size() && axes_.size() <= kMaxRank,
                 "a position per axis of the table");
  std::array<std::size_t, kMaxRank> lower{};
  std::array<double, kMaxRank> weight{};
  Reading reading;
  for (std::size_t i = 0; i < axes_.size(); ++i) {
    lower[i] = positions[i].lower;
    weight[i] = positions[i].weight;
  }
  SumCorners<false>(lower.data(), weight.data(), reading);
  return reading.value;
}

double GridTable::LookupAt(std::span<const Position> positions) const {
  const double value = ReadAt(positions);
  for (const Position& p : positions) {
    if (p.outside) {
      out_of_grid_.value.fetch_add(1, std::memory_order_relaxed);
      break;
    }
  }
  return value;
}

double GridTable::LookupAt(const Position& first, const Position& second) const {
  FLEETSIM_CHECK(axes_.size() == 2, "two positions read a two-axis table");
  const std::size_t lower[] = {first.lower, second.lower};
  const double weight[] = {first.weight, second.weight};
  Reading reading;
  SumTwoAxes<false>(lower, weight, reading);
  if (first.outside || second.outside) out_of_grid_.value.fetch_add(1, std::memory_order_relaxed);
  return reading.value;
}

double GridTable::Lookup(std::span<const double> point) const {
  const Reading reading = Read<false>(point);
  if (reading.outside) out_of_grid_.value.fetch_add(1, std::memory_order_relaxed);
  return reading.value;
}

std::optional<double> GridTable::LookupSet(std::span<const double> point) const {
  const Reading reading = Read<true>(point);
  if (reading.outside || reading.unset) return std::nullopt;
  return reading.value;
}

}  // namespace fleetsim
