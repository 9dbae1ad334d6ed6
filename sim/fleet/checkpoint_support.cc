#include "fleet/checkpoint_support.h"

#include "fleet/gateway_shard.h"
#include "fleet/instance_shard.h"
#include "fleet/request_ledger.h"
#include "fleet/timeseries.h"
#include "fleet/workload_reader.h"

namespace fleetsim {

// The size guards. A struct below grew or shrank: a field was added (or removed). If it
// is configuration, decide whether a checkpointed run with it restarts to the same
// results -- if not, refuse it in CheckpointRefusal; if it is state, save it in its part's
// Save/Load (and bump kCheckpointFormat, fleet/checkpoint_files.h). Then update the size.
// Engine state has its own guards beside its Save (engine/request.cc, engine/instance.cc).
static_assert(sizeof(ClusterConfig) == 224, "ClusterConfig changed: see the note above");
static_assert(sizeof(InstanceGroupConfig) == 1912, "InstanceGroupConfig changed: see above");
static_assert(sizeof(GatewaysConfig) == 48, "GatewaysConfig changed: see the note above");
static_assert(sizeof(EngineConfig) == 264, "EngineConfig changed: see the note above");
static_assert(sizeof(ResolvedEngineConfig) == 464, "ResolvedEngineConfig changed: see above");
static_assert(sizeof(SchedulerConfig) == 40, "SchedulerConfig changed: see the note above");
static_assert(sizeof(InstanceShard) == 264, "InstanceShard changed: see the note above");
static_assert(sizeof(GatewayShard) == 160, "GatewayShard changed: see the note above");
static_assert(sizeof(RequestLedger) == 440, "RequestLedger changed: see the note above");
static_assert(sizeof(Timeseries) == 72, "Timeseries changed: see the note above");
static_assert(sizeof(WorkloadReader) == 192, "WorkloadReader changed: see the note above");

std::optional<std::string> CheckpointRefusal(const FleetSetup& fleet) {
  for (std::size_t g = 0; g < fleet.groups.size(); ++g) {
    const EngineSetup& setup = fleet.groups[g];
    const std::string group = "instance group " + fleet.cluster.groups[g].name + ": ";
    // Today speculation only sizes the GDN state blocks (saved with the pool); the MTP
    // work puts drafted-token state into requests, which format 1 does not hold.
    if (setup.engine.num_spec > 0)
      return group +
             "num_speculative_tokens > 0 (speculative decoding) is not covered by checkpoints "
             "yet";
  }
  return std::nullopt;
}

}  // namespace fleetsim
