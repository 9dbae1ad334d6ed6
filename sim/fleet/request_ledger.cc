#include "fleet/request_ledger.h"

namespace fleetsim {

RequestLedger::RequestLedger(const ClusterConfig& cluster, const std::vector<std::string>& models,
                             const std::vector<int32_t>& model_of_group, bool keep_rows)
    : slo_(cluster.slo), keep_rows_(keep_rows), model_of_group_(model_of_group), fleet_("fleet") {
  for (const InstanceGroupConfig& g : cluster.groups)
    groups_.emplace_back(g.name);
  if (models.size() > 1) {
    for (const std::string& model : models)
      models_.emplace_back("model:" + model);
  }
}

void RequestLedger::Add(const output::RequestRow& row, int32_t group, int32_t prefill_group) {
  if (group >= 0) {
    const auto g = static_cast<std::size_t>(group);
    groups_[g].Add(row, slo_);
    if (!models_.empty()) models_[static_cast<std::size_t>(model_of_group_[g])].Add(row, slo_);
  }
  if (prefill_group >= 0 && prefill_group != group)
    groups_.at(static_cast<std::size_t>(prefill_group)).Add(row, slo_);
  fleet_.Add(row, slo_);
  if (keep_rows_) rows_.push_back(row);
  ++settled_;
}

std::vector<output::SummaryRow> RequestLedger::Summaries(const comm::Comm& comm) {
  std::vector<output::SummaryRow> rows;
  for (std::vector<SummaryBuilder>* builders : {&groups_, &models_}) {
    for (SummaryBuilder& s : *builders) {
      s.AllReduce(comm);
      rows.push_back(s.Build());
    }
  }
  fleet_.AllReduce(comm);
  rows.push_back(fleet_.Build());
  return rows;
}

void RequestLedger::Save(CheckpointWriter& w) const {
  w.U64(groups_.size());
  w.U64(models_.size());
  for (const std::vector<SummaryBuilder>* builders : {&groups_, &models_}) {
    for (const SummaryBuilder& s : *builders)
      s.Save(w);
  }
  fleet_.Save(w);
  w.Bool(keep_rows_);
  w.Pods(rows_);
  w.I64(settled_);
}

void RequestLedger::LoadMerge(CheckpointReader& r) {
  r.Require(r.U64() == groups_.size() && r.U64() == models_.size(), "summary groups");
  for (std::vector<SummaryBuilder>* builders : {&groups_, &models_}) {
    for (SummaryBuilder& s : *builders)
      s.LoadMerge(r);
  }
  fleet_.LoadMerge(r);
  r.Require(r.Bool() == keep_rows_, "request-rows setting");
  const std::vector<output::RequestRow> rows = r.Pods<output::RequestRow>();
  rows_.insert(rows_.end(), rows.begin(), rows.end());
  settled_ += r.I64();
}

}  // namespace fleetsim
