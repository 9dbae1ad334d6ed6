// A fleet run (SPEC.md, "The simulation"): gateways route each request of the workload to
// an instance, and the instances serve them, spread over ranks: MPI processes, and threads
// within each (comm/communicator.h).
//
// RunFleet is the conservative window loop, and only that; its parts are rooms of their
// own: the grid of steps, epochs and windows (window_clock.h), the workload read on one
// rank and shipped to the gateways' ranks (workload_reader.h), this rank's gateways and
// their routers (gateway_shard.h), this rank's instances (instance_shard.h), the settled requests
// and their summaries (request_ledger.h), the output (run_writer.h), and the one cross-rank error
// agreement (comm/error_agreement.h).
//
// At each window's start the ranks agree on the next event (empty stretches are skipped:
// one MPI_Allreduce), refresh the load snapshot at an epoch's start, ship and route the
// window's arrivals and send them to their instances' ranks; then every instance advances
// to the window's end independently. docs/DESIGN.md says why this gives the same results
// as windows of one lookahead, with far fewer meetings.
//
// Results do not depend on the rank or thread count: requests have their workload
// position as id, every tie is broken by (time, id), routers draw from their own seeded
// streams, and tables are written in id order.
//
//   FleetRunStats stats = RunFleet(fleet, source, options, file, MPI_COMM_WORLD);
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <mpi.h>

#include "fleet/fleet_setup.h"
#include "fleet/progress.h"
#include "fleet/run_writer.h"
#include "output/hdf5_file.h"
#include "workload/workload_source.h"

namespace fleetsim {

// Checkpoints of a run (docs/CHECKPOINT.md): a consistent snapshot at a window boundary,
// and a run continued from one to the tables the uninterrupted run writes.
struct CheckpointOptions {
  std::string dir;           // write checkpoints here ("": none)
  SimTime every = 0;         // at the first window boundary at or past each multiple of this
  std::string restart;       // continue from the checkpoint here ("": from the start)
  uint64_t inputs = 0;       // the fingerprint of the run's inputs, saved with each checkpoint
  std::string build;         // this fleetsim's version, saved with each checkpoint
  std::string command_line;  // the run's, saved (a restart keeps the first run's)
  // For tests: every rank kills itself (SIGKILL) once checkpoint `kill_after` of this
  // process is in place (0: never) -- a run dying at the worst moment, on purpose.
  int64_t kill_after = 0;
};

struct FleetRunOptions {
  uint64_t seed = 0;
  int threads = 1;  // ranks per process, one per thread
  SimTime horizon = kNever;
  bool trace_steps = false;  // write /steps
  bool request_rows = true;  // write /requests (off: summaries and time series only)
  ProgressMode progress = ProgressMode::kOff;  // rank 0's progress on stderr (progress.h)
  // Asked at each window boundary: 0, or the number of a signal that asks the run to stop
  // (SIGINT, SIGTERM). Any rank's request stops every rank there with FleetInterrupted.
  std::function<int()> interrupted;
  CheckpointOptions checkpoint;
};

// Thrown on every rank when a rank's `interrupted` asked the run to stop; nothing has
// been printed. `signal` is the highest signal number any rank was asked with.
struct FleetInterrupted {
  int signal = 0;
};

// Opens another copy of the run's workload, for a thread that reads its own share.
using OpenWorkloadSource = std::function<std::unique_ptr<WorkloadSource>()>;

// Collective over `comm`: writes /requests (unless !request_rows), /instances, /summary,
// /timeseries and, with trace_steps, /steps into `file`. `source` is the workload on rank
// 0 and nullptr elsewhere: rank 0 alone reads it, sending each window's arrivals to the
// ranks of their gateways. A failure on any rank stops every rank at the next meeting
// (comm::AgreeOnFailure): one rank rethrows it, the others throw QuietExit.
//
// With options.threads > 1 each process runs that many ranks, one per thread
// (comm/communicator.h): results are those of as many MPI ranks. Where `source` can pass
// over requests, `open_source` gives each further thread a copy of its own, so that every
// thread makes its own gateways' requests; otherwise rank 0 reads for all.
FleetRunStats RunFleet(const FleetSetup& fleet, WorkloadSource* source,
                       const FleetRunOptions& options, output::Hdf5File& file, MPI_Comm comm,
                       const OpenWorkloadSource& open_source = {});

}  // namespace fleetsim
