// The fleet loop's grid of simulated time, from a cluster config alone (docs/DESIGN.md,
// "The fleet across ranks"): routing steps of the gateway -> instance latency, load-
// snapshot epochs of staleness_s rounded up to whole steps, and windows of one epoch or
// at most kMaxWindow of it. `fleetsim run --dry-run` prints it.
//
//   WindowPlan plan = PlanWindows(cluster);   // plan.window: the longest window
#pragma once

#include "cluster/cluster_config.h"
#include "core/sim_time.h"

namespace fleetsim {

// The longest window of simulated time, whatever the staleness: a window's arrivals are
// all in flight at once, so a long staleness must not hold a long stretch of the workload.
inline constexpr SimTime kMaxWindow = 1'000'000'000;

struct WindowPlan {
  SimTime step = 1;        // the lookahead: gateway -> instance latency (at least 1 ns)
  SimTime epoch = 1;       // load-snapshot epoch: whole steps, at least one
  SimTime max_window = 1;  // whole steps, at most kMaxWindow
  SimTime window = 1;      // the longest window: min(epoch, max_window)
};

WindowPlan PlanWindows(const ClusterConfig& cluster);

}  // namespace fleetsim
