// What `fleetsim sweep` prints: the point list (--list) and, after a sweep, the ranking
// (top 20) and the best layout with its margin over the next:
//
//   best: point 2 (tp=2 replicas=16 policy=least_outstanding) goodput_per_gpu 1.872, ahead of
//   the next (point 0) by 4.1 %
#pragma once

#include <string>
#include <vector>

#include "sweep/sweep_points.h"
#include "sweep/sweep_spec.h"
#include "sweep/sweep_table.h"

namespace fleetsim {

// "points: N", then "point K: <layout>" per point, then "skipped: ..." per skipped one.
std::string PointList(const SweepPoints& sweep);

// The `top` best rows as a table, then the "best:" line.
std::string Ranking(const std::vector<SweepRow>& rows, const std::vector<SweepPoint>& points,
                    const SweepSpec& spec, std::size_t top = 20);

}  // namespace fleetsim
