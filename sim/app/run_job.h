// One simulation job, as `fleetsim run` and each point of `fleetsim sweep` run it: a
// cluster config and a workload in, one HDF5 file out (with /provenance), the summary
// back. Collective over `comm` (MPI_COMM_WORLD for a run, MPI_COMM_SELF for a sweep point
// run by one rank): the same job gives the same file whichever way it is launched.
//
//   RunJob job;
//   job.cluster = "cluster_configs/default_fleet.yaml";
//   job.workload = "runs/examples/default_fleet_traffic.yaml";
//   job.output = "out/run.h5";
//   RunJobResult result = RunJobOn(job, MPI_COMM_WORLD);
#pragma once

#include <string>

#include <mpi.h>

#include "fleet/fleet_run.h"
#include "workload/workload_window.h"

namespace fleetsim {

struct RunJob {
  std::string cluster;  // a cluster config file
  std::string workload;
  std::string format = "auto";
  std::string output;
  WindowOptions window;  // its default_model must be one the fleet serves
  // A request naming a model no instance group serves is a bad line (--strict-models),
  // not a request rejected with no_model.
  bool strict_models = false;
  FleetRunOptions fleet;
  std::string command_line;  // recorded in /provenance
};

struct RunJobResult {
  FleetRunStats stats;
  std::size_t instances = 0;
  double wall_s = 0;
};

// A failure anywhere (bad input, an unwritable output) throws on every rank: the rank the
// error agreement picks (comm/error_agreement.h) rethrows it, the others throw QuietExit.
RunJobResult RunJobOn(const RunJob& job, MPI_Comm comm);

}  // namespace fleetsim
