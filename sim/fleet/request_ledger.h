// Every request this rank settled: its /requests row (unless the run keeps none) and its
// share of the /summary rows -- one per instance group, then the fleet's. Requests settle
// where they end: at an instance's rank (finished, rejected by the engine, unfinished at
// the horizon) or at the reader (arrived after the horizon, never routed). Each is added
// exactly once; the writer checks that every id comes back once over all ranks.
//
//   RequestLedger ledger(fleet.cluster, /*keep_rows=*/true);
//   ledger.Add(RequestRowOf(record, instance, gateway, delays), group);
//   std::vector<output::SummaryRow> rows = ledger.Summaries(comm);   // collective
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <mpi.h>

#include "cluster/cluster_config.h"
#include "fleet/fleet_metrics.h"
#include "output/run_tables.h"

namespace fleetsim {

class RequestLedger {
 public:
  RequestLedger(const ClusterConfig& cluster, bool keep_rows);

  // `group` is the instance group that settled it, or -1 when it reached no instance.
  void Add(const output::RequestRow& row, int32_t group);

  int64_t settled() const { return settled_; }
  // The rows kept (none unless keep_rows), in the order they settled.
  const std::vector<output::RequestRow>& rows() const { return rows_; }

  // Collective over `comm` (once): the summary rows, per group then "fleet", on every
  // rank.
  std::vector<output::SummaryRow> Summaries(MPI_Comm comm);

 private:
  SloConfig slo_;
  bool keep_rows_;
  std::vector<SummaryBuilder> groups_;
  SummaryBuilder fleet_;
  std::vector<output::RequestRow> rows_;
  int64_t settled_ = 0;
};

}  // namespace fleetsim
