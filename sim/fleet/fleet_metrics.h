// Per-request metrics (SPEC.md, "Time points and metrics") and their mergeable summaries.
//
// A request arrives at its gateway at the trace time and reaches its instance after the
// gateway -> instance latency; its first token and its completion reach the client after
// the instance -> client latency. TTFT = first token at the client - arrival; TPOT =
// (finish - first token) / (output tokens - 1); E2E = finish at the client - arrival.
// Goodput counts finished requests within both the TTFT and the TPOT SLO. Percentiles
// come from relative-error sketches (0.5 %), whose merge does not depend on the rank count.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cluster/cluster_config.h"
#include "comm/communicator.h"
#include "core/checkpoint_io.h"
#include "core/quantile_sketch.h"
#include "engine/instance.h"
#include "fleet/routed_request.h"
#include "output/run_tables.h"
#include "workload/workload_source.h"

namespace fleetsim {

struct NetworkDelays {
  SimTime gateway_to_instance = 0;
  SimTime instance_to_client = 0;
};

// The request's row; `record.arrival` is its arrival at the instance.
output::RequestRow RequestRowOf(const RequestRecord& record, int32_t instance, int32_t gateway,
                                const NetworkDelays& delays);
// A request a prefill instance handed to this decode instance: its arrival, first
// scheduling and prefix hit are the prefill instance's, its tokens and finish this one's,
// preemptions both's; its TTFT is this instance's first token, the one the client gets
// (vLLM's proxy drops the prefill's).
output::RequestRow DisaggregatedRowOf(const RequestRecord& decode, const PrefillLeg& prefill,
                                      int32_t instance, int32_t gateway,
                                      const NetworkDelays& delays);
// A request that never left its gateway (it arrived after the horizon): unfinished.
output::RequestRow UnroutedRowOf(const WorkloadRequest& request, int64_t id, int32_t gateway);
// A request for a model no instance group serves: rejected at its gateway, reason
// `no_model`, instance -1.
output::RequestRow NoModelRowOf(const WorkloadRequest& request, int64_t id, int32_t gateway);

class SummaryBuilder {
 public:
  explicit SummaryBuilder(std::string group);
  void Add(const output::RequestRow& row, const SloConfig& slo);
  // Sums every rank's builder into this one (collective over `comm`).
  void AllReduce(const comm::Comm& comm);
  output::SummaryRow Build() const;
  // The counts and sketches (docs/CHECKPOINT.md); LoadMerge adds saved ones to these, as
  // AllReduce adds another rank's.
  void Save(CheckpointWriter& w) const;
  void LoadMerge(CheckpointReader& r);

 private:
  std::string group_;
  // requests, finished, rejected, unfinished, good, output tokens
  std::vector<int64_t> counts_ = std::vector<int64_t>(6, 0);
  int64_t first_arrival_ = INT64_MAX, last_finish_ = INT64_MIN;
  QuantileSketch ttft_, tpot_, e2e_;
};

}  // namespace fleetsim
