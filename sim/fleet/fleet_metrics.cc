#include "fleet/fleet_metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "comm/collectives.h"

namespace fleetsim {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

enum Count { kRequests, kFinished, kRejected, kUnfinished, kGood, kOutputTokens };

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

output::RequestRow RequestRowOf(const RequestRecord& r, int32_t instance, int32_t gateway,
                                const NetworkDelays& delays) {
  output::RequestRow row{};
  row.id = r.id;
  output::CopyName(row.name, r.name);
  row.instance = instance;
  row.gateway = gateway;
  row.prefill_instance = row.decode_instance = row.dp_rank = -1;
  row.transfer_start_ns = row.transfer_end_ns = -1;
  row.preemptions = r.preemptions;
  const SimTime arrival = r.arrival - delays.gateway_to_instance;
  row.arrival_ns = arrival;
  row.input_tokens = r.input_tokens;
  row.output_tokens = r.output_tokens;
  row.cached_tokens = r.cached_tokens;
  row.queue_delay_ns = r.first_scheduled == kNever ? -1 : r.first_scheduled - r.arrival;
  const SimTime first_token =
      r.first_token == kNever ? kNever : r.first_token + delays.instance_to_client;
  row.first_token_ns = first_token == kNever ? -1 : first_token;
  const bool finished = r.state == RequestState::kFinished;
  // An unfinished request's finish is kNever: no sum (it would overflow).
  const SimTime finish = finished ? r.finish + delays.instance_to_client : kNever;
  row.finish_ns = finished ? finish : -1;
  row.ttft_s = first_token == kNever ? kNaN : ToSeconds(first_token - arrival);
  row.tpot_s = finished && r.output_tokens > 1
                   ? ToSeconds(r.finish - r.first_token) / static_cast<double>(r.output_tokens - 1)
                   : kNaN;
  row.e2e_s = finished ? ToSeconds(finish - arrival) : kNaN;
  output::CopyName(row.state, StateName(r));
  output::CopyName(row.reason, r.state == RequestState::kRejected ? NameOf(r.reject_reason) : "");
  return row;
}

output::RequestRow DisaggregatedRowOf(const RequestRecord& decode, const PrefillLeg& prefill,
                                      int32_t instance, int32_t gateway,
                                      const NetworkDelays& delays) {
  RequestRecord merged = decode;
  merged.arrival = prefill.arrival;
  merged.first_scheduled = prefill.first_scheduled;
  merged.cached_tokens = prefill.cached_tokens;
  merged.preemptions += prefill.preemptions;
  output::RequestRow row = RequestRowOf(merged, instance, gateway, delays);
  row.prefill_instance = prefill.instance;
  row.decode_instance = instance;
  row.transfer_start_ns = prefill.transfer_start;
  row.transfer_end_ns = prefill.transfer_end;
  row.transfer_bytes = prefill.transfer_bytes;
  return row;
}

output::RequestRow UnroutedRowOf(const WorkloadRequest& request, int64_t id, int32_t gateway) {
  output::RequestRow row{};
  row.id = id;
  output::CopyName(row.name, request.id);
  row.instance = -1;
  row.gateway = gateway;
  row.prefill_instance = row.decode_instance = row.dp_rank = -1;
  row.transfer_start_ns = row.transfer_end_ns = -1;
  row.arrival_ns = request.arrival;
  row.input_tokens = request.input_tokens;
  row.queue_delay_ns = row.first_token_ns = row.finish_ns = -1;
  row.ttft_s = row.tpot_s = row.e2e_s = kNaN;
  output::CopyName(row.state, "unfinished");
  return row;
}

output::RequestRow NoModelRowOf(const WorkloadRequest& request, int64_t id, int32_t gateway) {
  output::RequestRow row = UnroutedRowOf(request, id, gateway);
  output::CopyName(row.state, "rejected");
  output::CopyName(row.reason, "no_model");
  return row;
}

SummaryBuilder::SummaryBuilder(std::string group) : group_(std::move(group)) {}

void SummaryBuilder::Add(const output::RequestRow& row, const SloConfig& slo) {
  ++counts_[kRequests];
  first_arrival_ = std::min(first_arrival_, row.arrival_ns);
  const std::string_view state(row.state);
  if (state == "rejected") {
    ++counts_[kRejected];
    return;
  }
  if (state != "finished") {
    ++counts_[kUnfinished];
    return;
  }
  ++counts_[kFinished];
  last_finish_ = std::max(last_finish_, row.finish_ns);
  counts_[kOutputTokens] += row.output_tokens;
  ttft_.Add(row.ttft_s);
  e2e_.Add(row.e2e_s);
  if (!std::isnan(row.tpot_s)) tpot_.Add(row.tpot_s);
  const bool tpot_ok = std::isnan(row.tpot_s) || row.tpot_s <= slo.tpot_s;
  if (row.ttft_s <= slo.ttft_s && tpot_ok) ++counts_[kGood];
}

void SummaryBuilder::AllReduce(const comm::Comm& comm) {
  if (comm::SizeOf(comm) == 1) return;
  comm::AllReduceSum(counts_, comm);
  first_arrival_ = comm::AllReduceMin(first_arrival_, comm);
  last_finish_ = comm::AllReduceMax(last_finish_, comm);
  for (QuantileSketch* sketch : {&ttft_, &tpot_, &e2e_}) {
    std::vector<int64_t> counts = sketch->ToCounts();
    comm::AllReduceSum(counts, comm);
    QuantileSketch merged;
    merged.AddCounts(counts);
    *sketch = std::move(merged);
  }
}

void SummaryBuilder::Save(CheckpointWriter& w) const {
  w.Pods(counts_);
  w.I64(first_arrival_);
  w.I64(last_finish_);
  for (const QuantileSketch* sketch : {&ttft_, &tpot_, &e2e_})
    w.Pods(sketch->ToCounts());
}

void SummaryBuilder::LoadMerge(CheckpointReader& r) {
  const std::vector<int64_t> counts = r.Pods<int64_t>();
  r.Require(counts.size() == counts_.size(), "summary counts");
  for (std::size_t i = 0; i < counts.size(); ++i)
    counts_[i] += counts[i];
  first_arrival_ = std::min(first_arrival_, r.I64());
  last_finish_ = std::max(last_finish_, r.I64());
  for (QuantileSketch* sketch : {&ttft_, &tpot_, &e2e_}) {
    const std::vector<int64_t> buckets = r.Pods<int64_t>();
    try {
      sketch->AddCounts(buckets);
    } catch (const std::invalid_argument& e) {
      r.Fail(std::string("a latency sketch: ") + e.what());
    }
  }
}

output::SummaryRow SummaryBuilder::Build() const {
  output::SummaryRow row{};
  output::CopyName(row.group, group_);
  row.requests = counts_[kRequests];
  row.finished = counts_[kFinished];
  row.rejected = counts_[kRejected];
  row.unfinished = counts_[kUnfinished];
  row.duration_s = row.finished > 0 ? ToSeconds(last_finish_ - first_arrival_) : 0;
  const double span = row.duration_s > 0 ? row.duration_s : kNaN;
  row.throughput_rps = static_cast<double>(row.finished) / span;
  row.output_tokens_per_s = static_cast<double>(counts_[kOutputTokens]) / span;
  row.goodput_rps = static_cast<double>(counts_[kGood]) / span;
  row.slo_attainment = row.requests > 0
                           ? static_cast<double>(counts_[kGood]) / static_cast<double>(row.requests)
                           : kNaN;
  auto quantiles = [](const QuantileSketch& s, double& p50, double& p90, double& p99) {
    p50 = s.Quantile(0.5);
    p90 = s.Quantile(0.9);
    p99 = s.Quantile(0.99);
  };
  quantiles(ttft_, row.ttft_p50_s, row.ttft_p90_s, row.ttft_p99_s);
  quantiles(tpot_, row.tpot_p50_s, row.tpot_p90_s, row.tpot_p99_s);
  quantiles(e2e_, row.e2e_p50_s, row.e2e_p90_s, row.e2e_p99_s);
  return row;
}

}  // namespace fleetsim
