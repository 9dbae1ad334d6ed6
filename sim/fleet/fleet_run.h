// A fleet run (SPEC.md, "The simulation"): gateways route each request of the workload to
// an instance, and the instances serve them, spread over MPI ranks and TBB threads.
//
// Time advances in conservative windows, one per load-snapshot epoch (the staleness, in
// whole steps of the gateway -> instance latency L). Gateways learn of instances only
// through the snapshot at an epoch's start, so all their routing for the epoch is known
// then: at each window's start the ranks agree on the next event (empty stretches are
// skipped: one MPI_Allreduce(MIN)), refresh the snapshot, route the window's arrivals
// and send them, one batched message per destination rank; then every instance advances
// to the window's end independently (in parallel, TBB). docs/DESIGN.md says why this
// gives the same results as windows of length L, with far fewer meetings.
//
// Results do not depend on the rank or thread count: requests have their workload
// position as id, every tie is broken by (time, id), routers draw from their own seeded
// streams, and tables are written in id order.
//
//   FleetRunStats stats = RunFleet(fleet, source, options, file, MPI_COMM_WORLD);
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <mpi.h>

#include "fleet/fleet_setup.h"
#include "fleet/progress.h"
#include "output/hdf5_file.h"
#include "output/run_tables.h"
#include "workload/workload_source.h"

namespace fleetsim {

struct FleetRunOptions {
  uint64_t seed = 0;
  int threads = 1;  // TBB threads per rank
  SimTime horizon = kNever;
  bool trace_steps = false;  // write /steps
  bool request_rows = true;  // write /requests (off: summaries and time series only)
  ProgressMode progress = ProgressMode::kOff;  // rank 0's progress on stderr (progress.h)
  // Asked at each window boundary: 0, or the number of a signal that asks the run to stop
  // (SIGINT, SIGTERM). Any rank's request stops every rank there with FleetInterrupted.
  std::function<int()> interrupted;
};

// Thrown on every rank when a rank's `interrupted` asked the run to stop; nothing has
// been printed. `signal` is the highest signal number any rank was asked with.
struct FleetInterrupted {
  int signal = 0;
};

struct FleetRunStats {
  int64_t requests = 0;   // in the workload
  int64_t steps = 0;      // engine steps, all instances
  int64_t events = 0;     // engine steps + routed requests
  int64_t windows = 0;    // windows processed (empty stretches skipped)
  int64_t snapshots = 0;  // load-view refreshes
  int64_t out_of_grid = 0;
  std::vector<output::SummaryRow> summary;  // per group, then "fleet"
  std::string placement;                    // which rank ran which instances
};

// Collective over `comm`: writes /requests (unless !request_rows), /instances, /summary,
// /timeseries and, with trace_steps, /steps into `file`. `source` is the workload on rank
// 0 and nullptr elsewhere: rank 0 alone reads it, sending each window's arrivals to the
// ranks of their gateways.
FleetRunStats RunFleet(const FleetSetup& fleet, WorkloadSource* source,
                       const FleetRunOptions& options, output::Hdf5File& file, MPI_Comm comm);

// The gateway of request `id` among `gateways`: hash(id) mod G (SPEC.md).
int32_t GatewayOf(int64_t id, int gateways);

}  // namespace fleetsim
