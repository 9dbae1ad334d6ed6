#include "fleet/request_ledger.h"

namespace fleetsim {

RequestLedger::RequestLedger(const ClusterConfig& cluster, bool keep_rows)
    : slo_(cluster.slo), keep_rows_(keep_rows), fleet_("fleet") {
  for (const InstanceGroupConfig& g : cluster.groups)
    groups_.emplace_back(g.name);
}

void RequestLedger::Add(const output::RequestRow& row, int32_t group) {
  if (group >= 0) groups_[static_cast<std::size_t>(group)].Add(row, slo_);
  fleet_.Add(row, slo_);
  if (keep_rows_) rows_.push_back(row);
  ++settled_;
}

std::vector<output::SummaryRow> RequestLedger::Summaries(MPI_Comm comm) {
  std::vector<output::SummaryRow> rows;
  for (SummaryBuilder& s : groups_) {
    s.AllReduce(comm);
    rows.push_back(s.Build());
  }
  fleet_.AllReduce(comm);
  rows.push_back(fleet_.Build());
  return rows;
}

}  // namespace fleetsim
