#include "fleet/checkpoint_support.h"

#include "fleet/gateway_shard.h"
#include "fleet/instance_shard.h"
#include "fleet/request_ledger.h"
#include "fleet/routed_request.h"
#include "fleet/timeseries.h"
#include "fleet/workload_reader.h"

namespace fleetsim {

// The size guards. A struct below grew or shrank: a field was added (or removed). If it
// is configuration, decide whether a checkpointed run with it restarts to the same
// results -- if not, list it in UncoveredFeatures; if it is state, save it in its part's
// Save/Load (and bump kCheckpointFormat, fleet/checkpoint_files.h). Then update the size.
// Engine state has its own guards beside its Save (engine/request.cc,
// engine/instance_checkpoint.cc).
static_assert(sizeof(ClusterConfig) == 232, "ClusterConfig changed: see the note above");
static_assert(sizeof(InstanceGroupConfig) == 1992, "InstanceGroupConfig changed: see above");
static_assert(sizeof(GatewaysConfig) == 56, "GatewaysConfig changed: see the note above");
static_assert(sizeof(EngineConfig) == 328, "EngineConfig changed: see the note above");
static_assert(sizeof(ResolvedEngineConfig) == 568, "ResolvedEngineConfig changed: see above");
static_assert(sizeof(SchedulerConfig) == 88, "SchedulerConfig changed: see the note above");
static_assert(sizeof(InstanceShard) == 336, "InstanceShard changed: see the note above");
static_assert(sizeof(GatewayShard) == 208, "GatewayShard changed: see the note above");
static_assert(sizeof(RequestLedger) == 440, "RequestLedger changed: see the note above");
static_assert(sizeof(Timeseries) == 72, "Timeseries changed: see the note above");
static_assert(sizeof(WorkloadReader) == 328, "WorkloadReader changed: see the note above");
// Requests a prefill instance holds until it hands them over are saved in their wire form:
// a new field must travel in AppendRoutedRequest/ParseRoutedRequests (routed_request.cc).
static_assert(sizeof(RoutedRequest) == 256, "RoutedRequest changed: see the note above");
static_assert(sizeof(PrefillLeg) == 64, "PrefillLeg changed: see the note above");

// MTP speculation (its drafts follow from the request's saved counts and
// emitted_last_step; acceptance draws are a function of the request id and output
// position), prefill/decode disaggregation (instance_shard.cc, instance_checkpoint.cc,
// gateway_shard.cc) and data parallelism with expert parallelism (engine/dp_engine.cc:
// its ranks, the wave, the front end's published counts, requests not yet given a rank)
// are saved, so nothing is listed.
constexpr std::span<const UncoveredFeature> kUncovered{};

std::span<const UncoveredFeature> UncoveredFeatures() {
  return kUncovered;
}

std::optional<std::string> CheckpointRefusal(const FleetSetup& fleet,
                                             std::span<const UncoveredFeature> features) {
  for (std::size_t g = 0; g < fleet.cluster.groups.size(); ++g) {
    for (const UncoveredFeature& feature : features) {
      if (feature.used_by(fleet, g))
        return "instance group " + fleet.cluster.groups[g].name + ": " + feature.what(fleet, g) +
               " is not covered by checkpoints yet";
    }
  }
  return std::nullopt;
}

}  // namespace fleetsim
