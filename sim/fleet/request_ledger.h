// Every request this rank settled: its /requests row (unless the run keeps none) and its
// share of the /summary rows -- one per instance group, one per served model when the
// fleet serves more than one ("model:<name>": the requests its groups settled), then the
// fleet's. A disaggregated request also counts in its prefill group's row. Requests settle where
// they end: at an instance's rank (finished, rejected by the engine, unfinished at the horizon), at
// their gateway's (rejected: no group serves their model) or at the reader (arrived after the
// horizon, never routed). Each is added exactly once; the writer checks that every id comes back
// once over all ranks.
//
//   RequestLedger ledger(fleet.cluster, fleet.models, fleet.model_of_group, /*keep_rows=*/true);
//   ledger.Add(RequestRowOf(record, instance, gateway, delays), group);
//   std::vector<output::SummaryRow> rows = ledger.Summaries(comm);   // collective
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cluster/cluster_config.h"
#include "comm/communicator.h"
#include "fleet/fleet_metrics.h"
#include "output/run_tables.h"

namespace fleetsim {

class RequestLedger {
 public:
  // `models`: the served model names; `model_of_group`: each group's, as an index.
  RequestLedger(const ClusterConfig& cluster, const std::vector<std::string>& models,
                const std::vector<int32_t>& model_of_group, bool keep_rows);

  // `group` is the instance group that settled it, or -1 when it reached no instance;
  // `prefill_group`, for a request a prefill instance handed to `group`'s decode instance,
  // the prefill instance's group: its /summary row counts the request too (the requests
  // it prefilled, whole), while the model's and the fleet's rows count it once.
  void Add(const output::RequestRow& row, int32_t group, int32_t prefill_group = -1);

  int64_t settled() const { return settled_; }
  // The rows kept (none unless keep_rows), in the order they settled.
  const std::vector<output::RequestRow>& rows() const { return rows_; }

  // Collective over `comm` (once): the summary rows -- per group, per model (more than
  // one), then "fleet" -- on every rank.
  std::vector<output::SummaryRow> Summaries(const comm::Comm& comm);

  // The rows kept and the summaries so far (docs/CHECKPOINT.md); LoadMerge adds a saved
  // ledger to this one -- a run restarted on fewer ranks merges several ranks'.
  void Save(CheckpointWriter& w) const;
  void LoadMerge(CheckpointReader& r);

 private:
  SloConfig slo_;
  bool keep_rows_;
  std::vector<SummaryBuilder> groups_;
  std::vector<int32_t> model_of_group_;
  std::vector<SummaryBuilder> models_;  // empty unless the fleet serves more than one
  SummaryBuilder fleet_;
  std::vector<output::RequestRow> rows_;
  int64_t settled_ = 0;
};

}  // namespace fleetsim
