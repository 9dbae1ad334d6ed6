// A fleet run's output, written collectively into its one HDF5 file: /requests and
// /instances in id order, /summary, /timeseries and /steps (docs/README "Output"), and the
// counters of /provenance, each summed over the ranks -- so the file does not depend on
// how the run was spread. Each collective step is agreed on (comm/error_agreement.h): a
// rank that fails in one stops every rank there, none waits in the next.
//
//   RunWriter writer(comm.lead() ? &file : nullptr, comm);
//   writer.WriteRequests(ledger.rows(), total_requests);
//   writer.WriteInstances(shard.InstanceRows(), instances);
//   ...
//   WriteProvenance(file, provenance, stats, comm);
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "comm/communicator.h"
#include "fleet/instance_shard.h"
#include "fleet/timeseries.h"
#include "output/hdf5_file.h"
#include "output/run_tables.h"

namespace fleetsim {

// What a run did, summed over the ranks (the same on every rank).
struct FleetRunStats {
  int64_t requests = 0;                     // in the workload
  int64_t steps = 0;                        // engine steps, all instances
  int64_t events = 0;                       // engine steps + gateway decisions
  int64_t windows = 0;                      // windows processed (empty stretches skipped)
  int64_t snapshots = 0;                    // load-view refreshes
  int64_t out_of_grid = 0;                  // cost lookups outside the bundle's grid, all ranks
  std::vector<output::SummaryRow> summary;  // per group, then "fleet"
  std::string placement;                    // which rank ran which instances
  // Wall seconds a rank spent in the windows' meetings (waiting for the slowest rank and
  // exchanging), the mean over the ranks; 0 in one process.
  double meeting_time_s = 0;
};

// Where a process's ranks are threads (comm/communicator.h), their rows meet on its lead
// thread, the one that holds the file; the others pass a null file.
class RunWriter {
 public:
  RunWriter(output::Hdf5File* file, const comm::Comm& comm) : file_(file), comm_(comm) {}

  // This rank's rows (any ids, any order); every id in [0, total) once over the ranks.
  void WriteRequests(const std::vector<output::RequestRow>& mine, int64_t total);
  void WriteInstances(const std::vector<output::InstanceRow>& mine, int64_t total);
  // `rows` are the same on every rank; rank 0 writes them.
  void WriteSummary(const std::vector<output::SummaryRow>& rows);
  void WriteTimeseries(const Timeseries& series, const std::vector<std::string>& groups,
                       const std::vector<Timeseries::GroupSum>& sums = {});
  // /steps: instance by instance (ids in [0, instances)), each in time order.
  void WriteSteps(const std::vector<InstanceShard::StepRows>& mine, int64_t instances);

 private:
  // Writes `rows` at `offset` of a table of `total` on the lead thread, agreed on by all.
  template <typename Row>
  void Write(const char* name, const output::TableSchema& schema, const std::vector<Row>& rows,
             int64_t offset, int64_t total);

  output::Hdf5File* file_;
  comm::Comm comm_;
};

// The counters of a run as one rank holds them; SumOverRanks gives the run's.
struct RankCounters {
  int64_t requests_read = 0;  // only the reader rank reads
  int64_t steps = 0;
  int64_t gateway_decisions = 0;
  int64_t out_of_grid = 0;  // lookups by this rank's instances (after the shared setup)
};
// Collective: the counters summed over the ranks. `setup_out_of_grid` (lookups every rank
// made alike while building the fleet) is counted once.
RankCounters SumOverRanks(const RankCounters& mine, int64_t setup_out_of_grid,
                          const comm::Comm& comm);

// "rank 0: 0-31 | rank 1: 32-63 (a rank per process)", from the rank of every
// instance; the round robin of FleetSetup::Partition is named in a line ("instance i on
// rank i mod 2, instances 0-63 (...)"), and another fragmented placement is summarised
// as instances per rank. `ranks` counts every rank, `threads` the ranks (threads) of each
// process.
std::string PlacementText(const std::vector<int32_t>& owner_of, int ranks, int threads);

// What /provenance records of the job around the run (README, "Output").
struct RunProvenance {
  std::string version;
  std::string command_line;
  std::string cluster_config_path;
  std::string cluster_config_text;
  std::string workload_path;
  std::string workload_format;    // on the reader rank ("" elsewhere)
  int64_t skipped_bad_lines = 0;  // on the reader rank (0 elsewhere)
  double rate_scale = 1.0;
  std::string default_model;  // --model ("": none)
  bool strict_models = false;
  uint64_t seed = 0;
  std::string bundles;  // "group=bundle" per line
  // "group=backend decode-kernel block N (why; why); weights: ..." per line
  std::string attention;
  int threads = 1;
  bool request_rows = true;
  double wall_time_s = 0;
};
// Collective: /provenance's attributes and texts.
void WriteProvenance(output::Hdf5File& file, const RunProvenance& provenance,
                     const FleetRunStats& stats, const comm::Comm& comm);

}  // namespace fleetsim
