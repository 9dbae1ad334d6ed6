// Per-request metrics (SPEC.md, "Time points and metrics") and their summary per instance
// group and for the fleet. No network latency is charged yet, so the client sees the
// instance's times: TTFT = first token - arrival; TPOT = (finish - first token) /
// (output tokens - 1); E2E = finish - arrival. Goodput counts finished requests within both
// the TTFT and TPOT SLOs. Percentiles are exact here (one process holds every request).
#pragma once

#include <string>
#include <vector>

#include "cluster/cluster_config.h"
#include "engine/instance.h"
#include "output/run_tables.h"

namespace fleetsim {

output::RequestRow RequestRowOf(const RequestRecord& record, int instance);

class SummaryBuilder {
 public:
  explicit SummaryBuilder(std::string group) : group_(std::move(group)) {}
  void Add(const output::RequestRow& row, const SloConfig& slo);
  output::SummaryRow Build() const;

 private:
  std::string group_;
  int64_t requests_ = 0, finished_ = 0, rejected_ = 0, unfinished_ = 0, good_ = 0;
  int64_t output_tokens_ = 0;
  int64_t first_arrival_ = INT64_MAX, last_finish_ = 0;
  std::vector<double> ttft_, tpot_, e2e_;
};

// The summary as a table for people.
void PrintSummary(const std::vector<output::SummaryRow>& rows);

}  // namespace fleetsim
