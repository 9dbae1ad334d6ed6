#include "app/run_metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "core/stats.h"

namespace fleetsim {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

const char* StateName(const RequestRecord& record) {
  switch (record.state) {
    case RequestState::kFinished:
      return "finished";
    case RequestState::kRejected:
      return "rejected";
    default:
      return "unfinished";
  }
}

}  // namespace

output::RequestRow RequestRowOf(const RequestRecord& r, int instance) {
  output::RequestRow row{};
  row.id = r.id;
  output::CopyName(row.name, r.name);
  row.instance = instance;
  row.preemptions = r.preemptions;
  row.arrival_ns = r.arrival;
  row.input_tokens = r.input_tokens;
  row.output_tokens = r.output_tokens;
  row.cached_tokens = r.cached_tokens;
  row.queue_delay_ns = r.first_scheduled == kNever ? -1 : r.first_scheduled - r.arrival;
  row.first_token_ns = r.first_token == kNever ? -1 : r.first_token;
  const bool finished = r.state == RequestState::kFinished;
  row.finish_ns = finished ? r.finish : -1;
  row.ttft_s = r.first_token == kNever ? kNaN : ToSeconds(r.first_token - r.arrival);
  row.tpot_s = finished && r.output_tokens > 1
                   ? ToSeconds(r.finish - r.first_token) / static_cast<double>(r.output_tokens - 1)
                   : kNaN;
  row.e2e_s = finished ? ToSeconds(r.finish - r.arrival) : kNaN;
  output::CopyName(row.state, StateName(r));
  output::CopyName(row.reason, r.state == RequestState::kRejected ? NameOf(r.reject_reason) : "");
  return row;
}

void SummaryBuilder::Add(const output::RequestRow& row, const SloConfig& slo) {
  ++requests_;
  first_arrival_ = std::min(first_arrival_, row.arrival_ns);
  const std::string_view state(row.state);
  if (state == "rejected") {
    ++rejected_;
    return;
  }
  if (state != "finished") {
    ++unfinished_;
    return;
  }
  ++finished_;
  last_finish_ = std::max(last_finish_, row.finish_ns);
  output_tokens_ += row.output_tokens;
  ttft_.push_back(row.ttft_s);
  e2e_.push_back(row.e2e_s);
  if (!std::isnan(row.tpot_s)) tpot_.push_back(row.tpot_s);
  const bool tpot_ok = std::isnan(row.tpot_s) || row.tpot_s <= slo.tpot_s;
  if (row.ttft_s <= slo.ttft_s && tpot_ok) ++good_;
}

output::SummaryRow SummaryBuilder::Build() const {
  output::SummaryRow row{};
  output::CopyName(row.group, group_);
  row.requests = requests_;
  row.finished = finished_;
  row.rejected = rejected_;
  row.unfinished = unfinished_;
  row.duration_s = finished_ > 0 ? ToSeconds(last_finish_ - first_arrival_) : 0;
  const double span = row.duration_s > 0 ? row.duration_s : kNaN;
  row.throughput_rps = static_cast<double>(finished_) / span;
  row.output_tokens_per_s = static_cast<double>(output_tokens_) / span;
  row.goodput_rps = static_cast<double>(good_) / span;
  row.slo_attainment =
      requests_ > 0 ? static_cast<double>(good_) / static_cast<double>(requests_) : kNaN;
  auto quantiles = [](std::vector<double> values, double& p50, double& p90, double& p99) {
    std::sort(values.begin(), values.end());
    p50 = Quantile(values, 0.5);
    p90 = Quantile(values, 0.9);
    p99 = Quantile(values, 0.99);
  };
  quantiles(ttft_, row.ttft_p50_s, row.ttft_p90_s, row.ttft_p99_s);
  quantiles(tpot_, row.tpot_p50_s, row.tpot_p90_s, row.tpot_p99_s);
  quantiles(e2e_, row.e2e_p50_s, row.e2e_p90_s, row.e2e_p99_s);
  return row;
}

void PrintSummary(const std::vector<output::SummaryRow>& rows) {
  std::printf("%-20s %8s %8s %8s %9s %9s %9s %9s %9s %9s %7s\n", "group", "requests", "finished",
              "rejected", "req/s", "tok/s", "goodput", "TTFT p50", "TPOT p50", "E2E p90", "SLO");
  for (const output::SummaryRow& r : rows) {
    std::printf("%-20.20s %8lld %8lld %8lld %9.2f %9.1f %9.2f %8.3fs %8.4fs %8.2fs %6.1f%%\n",
                r.group, static_cast<long long>(r.requests), static_cast<long long>(r.finished),
                static_cast<long long>(r.rejected), r.throughput_rps, r.output_tokens_per_s,
                r.goodput_rps, r.ttft_p50_s, r.tpot_p50_s, r.e2e_p90_s, 100 * r.slo_attainment);
  }
}

}  // namespace fleetsim
