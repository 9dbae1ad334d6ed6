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
static_assert(sizeof(ClusterConfig) == 232, "ClusterConfig changed: see the note above");
static_assert(sizeof(InstanceGroupConfig) == 1992, "InstanceGroupConfig changed: see above");
static_assert(sizeof(GatewaysConfig) == 56, "GatewaysConfig changed: see the note above");
static_assert(sizeof(EngineConfig) == 328, "EngineConfig changed: see the note above");
static_assert(sizeof(ResolvedEngineConfig) == 568, "ResolvedEngineConfig changed: see above");
static_assert(sizeof(SchedulerConfig) == 80, "SchedulerConfig changed: see the note above");
static_assert(sizeof(InstanceShard) == 264, "InstanceShard changed: see the note above");
static_assert(sizeof(GatewayShard) == 208, "GatewayShard changed: see the note above");
static_assert(sizeof(RequestLedger) == 440, "RequestLedger changed: see the note above");
static_assert(sizeof(Timeseries) == 72, "Timeseries changed: see the note above");
static_assert(sizeof(WorkloadReader) == 264, "WorkloadReader changed: see the note above");

std::optional<std::string> CheckpointRefusal(const FleetSetup& fleet) {
  for (std::size_t g = 0; g < fleet.groups.size(); ++g) {
    const EngineSetup& setup = fleet.groups[g];
    const std::string group = "instance group " + fleet.cluster.groups[g].name + ": ";
    // MTP speculation keeps drafted tokens and acceptance positions in flight between
    // steps that no part saves yet.
    if (setup.engine.num_spec > 0)
      return group + "speculative decoding (speculative_config) is not covered by checkpoints yet";
    // A prefill/decode fleet has KV transfers in flight (sent blocks held on the prefill
    // side, hand-offs between windows) that no part saves yet.
    // A data-parallel instance's lock-step state (its ranks, the wave, the front end's
    // published counts, requests not yet given a rank) is not saved yet.
    if (fleet.cluster.groups[g].dp > 1)
      return group + "dp " + std::to_string(fleet.cluster.groups[g].dp) +
             " (data parallelism with expert parallelism) is not covered by checkpoints yet";
    if (fleet.cluster.groups[g].role != InstanceRole::kMixed)
      return group + "role " + std::string(InstanceRoleName(fleet.cluster.groups[g].role)) +
             " (prefill/decode disaggregation) is not covered by checkpoints yet";
  }
  return std::nullopt;
}

}  // namespace fleetsim
