// The routing policies behind fleet/router.h, one small class each, chosen by
// RouterConfig::policy. A Picker chooses a target index from the shared LoadView; the
// Router then adds the assignment to the view and tells the Picker, which keeps its own
// index structures in step.
//
//   std::unique_ptr<Picker> picker = MakePicker(config, view, stream_seed);
//   int32_t index = picker->Pick(request);
//   ...update view at index...; picker->Changed(index);
#pragma once

#include <cstdint>
#include <memory>

#include "cluster/routing_policy.h"
#include "core/checkpoint_io.h"
#include "fleet/router.h"
#include "fleet/router_view.h"

namespace fleetsim::router_internal {

class Picker {
 public:
  virtual ~Picker() = default;
  // The chosen target's index in view order.
  virtual int32_t Pick(const RouteRequest& request) = 0;
  // The view's entry `index` changed: an assignment, or a new snapshot load.
  virtual void Changed(int32_t /*index*/) {}
  // Any number of the view's entries changed (a whole new snapshot).
  virtual void Refreshed() {}
  // What the picker holds beyond the view -- a random stream, a round-robin position
  // (docs/CHECKPOINT.md); Load follows a Refreshed() on the loaded view.
  virtual void Save(CheckpointWriter& /*w*/) const {}
  virtual void Load(CheckpointReader& /*r*/) {}
};

// `view` must outlive the picker and keep its address; its targets and weights are final.
std::unique_ptr<Picker> MakePicker(const RouterConfig& config, const LoadView& view,
                                   uint64_t stream_seed);

}  // namespace fleetsim::router_internal
