// The load snapshot across ranks: each rank sends only the loads of its instances that
// changed since the last snapshot (InstanceShard::TakeLoadChanges), to every rank, where
// every gateway applies them to its routers' views (GatewayShard::Apply). A quiet fleet
// sends next to nothing, and no step costs a loop over every instance.
//
//   std::vector<LoadChange> changes = ExchangeLoadChanges(instances.TakeLoadChanges(), comm);
//   gateways.Apply(changes);
#pragma once

#include <vector>

#include "comm/communicator.h"
#include "fleet/router.h"

namespace fleetsim {

// Collective: every rank's `mine`, concatenated in rank order, on every rank.
std::vector<LoadChange> ExchangeLoadChanges(const std::vector<LoadChange>& mine,
                                            const comm::Comm& comm);

}  // namespace fleetsim
