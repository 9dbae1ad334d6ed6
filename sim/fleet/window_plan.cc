#include "fleet/window_plan.h"

#include <algorithm>
#include <cmath>

namespace fleetsim {

WindowPlan PlanWindows(const ClusterConfig& cluster) {
  WindowPlan plan;
  plan.step = std::max<SimTime>(1, SecondsToSimTime(cluster.latency.gateway_to_instance_s));
  plan.max_window = std::max<SimTime>(1, kMaxWindow / plan.step) * plan.step;
  plan.epoch =
      plan.step *
      std::max<int64_t>(
          1, static_cast<int64_t>(std::ceil(cluster.gateways.staleness_s / ToSeconds(plan.step))));
  plan.window = std::min(plan.epoch, plan.max_window);
  return plan;
}

}  // namespace fleetsim
