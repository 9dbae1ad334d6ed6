#include "fleet/run_writer.h"

#include <array>

#include "comm/collectives.h"
#include "comm/error_agreement.h"
#include "fleet/row_exchange.h"

namespace fleetsim {

template <typename Row>
void RunWriter::Write(const char* name, const output::TableSchema& schema,
                      const std::vector<Row>& rows, int64_t offset, int64_t total) {
  comm::OnEveryRank(comm_, [&] {
    if (file_)
      file_->WriteTable(name, schema, rows.data(), offset, static_cast<int64_t>(rows.size()),
                        total);
  });
}

void RunWriter::WriteRequests(const std::vector<output::RequestRow>& mine, int64_t total) {
  OrderedRows<output::RequestRow> ordered;
  comm::OnEveryRank(comm_, [&] {
    ordered =
        JoinProcessRows(ExchangeRowsByIndex(
                            mine, [](const output::RequestRow& r) { return r.id; }, total, comm_),
                        comm_);
  });
  Write("/requests", output::RequestSchema(), ordered.rows, ordered.offset, total);
}

void RunWriter::WriteInstances(const std::vector<output::InstanceRow>& mine, int64_t total) {
  OrderedRows<output::InstanceRow> ordered;
  comm::OnEveryRank(comm_, [&] {
    ordered = JoinProcessRows(
        ExchangeRowsByIndex(
            mine, [](const output::InstanceRow& r) { return int64_t{r.id}; }, total, comm_),
        comm_);
  });
  Write("/instances", output::InstanceSchema(), ordered.rows, ordered.offset, total);
}

void RunWriter::WriteSummary(const std::vector<output::SummaryRow>& rows) {
  const int64_t total = static_cast<int64_t>(rows.size());
  static const std::vector<output::SummaryRow> kNone;
  Write("/summary", output::SummarySchema(), comm::RankOf(comm_) == 0 ? rows : kNone, 0, total);
}

void RunWriter::WriteTimeseries(const Timeseries& series, const std::vector<std::string>& groups,
                                const std::vector<Timeseries::GroupSum>& sums) {
  // The rows are on rank 0; every rank needs the count.
  const std::vector<output::TimeseriesRow> rows = series.Reduce(groups, comm_, sums);
  const int64_t total = comm::AllReduceMax(static_cast<int64_t>(rows.size()), comm_);
  Write("/timeseries", output::TimeseriesSchema(), rows, 0, total);
}

void RunWriter::WriteSteps(const std::vector<InstanceShard::StepRows>& mine, int64_t instances) {
  struct IndexedStep {
    int64_t index;
    output::StepRow row;
  };
  // Each instance's steps take the table positions after those of lower ids.
  std::vector<int64_t> counts(static_cast<std::size_t>(instances), 0);
  for (const InstanceShard::StepRows& s : mine)
    counts[static_cast<std::size_t>(s.instance)] = static_cast<int64_t>(s.rows->size());
  comm::AllReduceSum(counts, comm_);
  std::vector<int64_t> first(counts.size() + 1, 0);
  for (std::size_t i = 0; i < counts.size(); ++i)
    first[i + 1] = first[i] + counts[i];
  std::vector<IndexedStep> indexed;
  for (const InstanceShard::StepRows& s : mine) {
    int64_t index = first[static_cast<std::size_t>(s.instance)];
    for (const output::StepRow& row : *s.rows)
      indexed.push_back({index++, row});
  }
  OrderedRows<IndexedStep> ordered;
  comm::OnEveryRank(comm_, [&] {
    ordered = JoinProcessRows(
        ExchangeRowsByIndex(
            indexed, [](const IndexedStep& s) { return s.index; }, first.back(), comm_),
        comm_);
  });
  std::vector<output::StepRow> rows;
  rows.reserve(ordered.rows.size());
  for (const IndexedStep& s : ordered.rows)
    rows.push_back(s.row);
  Write("/steps", output::StepSchema(), rows, ordered.offset, first.back());
}

RankCounters SumOverRanks(const RankCounters& mine, int64_t setup_out_of_grid,
                          const comm::Comm& comm) {
  std::array<int64_t, 4> sums = {mine.requests_read, mine.steps, mine.gateway_decisions,
                                 mine.out_of_grid};
  comm::AllReduceSum(sums, comm);
  return {sums[0], sums[1], sums[2], setup_out_of_grid + sums[3]};
}

std::string PlacementText(const std::vector<int32_t>& owner, int ranks, int threads) {
  const std::string t = std::to_string(threads);
  const std::string per_rank =
      threads <= 1 ? " (a rank per process)"
                   : " (" + t + " threads per process, each a rank: rank r is thread r mod " + t +
                         " of process r / " + t + ")";
  // FleetSetup::Partition's round robin, in a line rather than every id.
  bool round_robin = ranks > 1 && owner.size() > static_cast<std::size_t>(ranks);
  for (std::size_t i = 0; round_robin && i < owner.size(); ++i)
    round_robin = owner[i] == static_cast<int32_t>(i % static_cast<std::size_t>(ranks));
  if (round_robin)
    return "instance i on rank i mod " + std::to_string(ranks) + ", instances 0-" +
           std::to_string(owner.size() - 1) + per_rank;
  std::string text;
  for (int r = 0; r < ranks; ++r) {
    text += (r ? " | rank " : "rank ") + std::to_string(r) + ":";
    int32_t run_start = -1;
    for (std::size_t i = 0; i <= owner.size(); ++i) {
      const bool in = i < owner.size() && owner[i] == r;
      if (in && run_start < 0) run_start = static_cast<int32_t>(i);
      if (!in && run_start >= 0) {
        const auto last = static_cast<int32_t>(i) - 1;
        text += " " + std::to_string(run_start) +
                (last > run_start ? "-" + std::to_string(last) : std::string());
        run_start = -1;
      }
    }
  }
  text += per_rank;
  // An HDF5 attribute must stay well under 64 KiB; a fragmented placement is summarised.
  if (text.size() > 16384) {
    std::vector<int64_t> counts(static_cast<std::size_t>(ranks), 0);
    for (int32_t r : owner)
      ++counts[static_cast<std::size_t>(r)];
    text = "instances per rank:";
    for (int r = 0; r < ranks; ++r)
      text += " " + std::to_string(counts[static_cast<std::size_t>(r)]);
  }
  return text;
}

void WriteProvenance(output::Hdf5File& file, const RunProvenance& p, const FleetRunStats& stats,
                     const comm::Comm& comm) {
  // Only the reader rank knows the workload's format and skipped lines.
  const std::string format = comm::BroadcastString(p.workload_format, comm);
  std::array<int64_t, 1> skipped = {p.skipped_bad_lines};
  comm::AllReduceSum(skipped, comm);
  comm::OnEveryRank(comm, [&] {
    const std::string at = "/provenance";
    file.WriteAttribute(at, "fleetsim_version", p.version);
    // Texts that grow with the user's input are datasets: an attribute over 64 KiB does
    // not fit its object's header.
    file.WriteText(at, "command_line", p.command_line);
    file.WriteAttribute(at, "cluster_config_path", p.cluster_config_path);
    file.WriteText(at, "cluster_config", p.cluster_config_text);
    file.WriteAttribute(at, "workload_path", p.workload_path);
    file.WriteAttribute(at, "workload_format", format);
    file.WriteAttribute(at, "skipped_bad_lines", skipped[0]);
    file.WriteAttribute(at, "rate_scale", p.rate_scale);
    file.WriteAttribute(at, "default_model", p.default_model);
    file.WriteAttribute(at, "strict_models", int64_t{p.strict_models});
    file.WriteAttribute(at, "seed", static_cast<int64_t>(p.seed));
    file.WriteText(at, "bundles", p.bundles);
    file.WriteText(at, "attention", p.attention);
    file.WriteAttribute(at, "ranks", int64_t{comm::SizeOf(comm)});
    file.WriteAttribute(at, "threads", int64_t{p.threads});
    file.WriteAttribute(at, "placement", stats.placement);
    file.WriteAttribute(at, "request_rows", int64_t{p.request_rows});
    file.WriteAttribute(at, "steps", stats.steps);
    file.WriteAttribute(at, "events", stats.events);
    file.WriteAttribute(at, "windows", stats.windows);
    file.WriteAttribute(at, "load_snapshots", stats.snapshots);
    file.WriteAttribute(at, "out_of_grid_lookups", stats.out_of_grid);
    file.WriteAttribute(at, "wall_time_s", p.wall_time_s);
    file.WriteAttribute(at, "meeting_time_s", stats.meeting_time_s);
  });
}

}  // namespace fleetsim
