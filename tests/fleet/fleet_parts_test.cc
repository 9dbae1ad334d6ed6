// The fleet's parts that need no engine: routed requests survive the wire, the time
// series adds up, the summary's counts and the partition's balance.
#include <cmath>
#include <set>

#include <gtest/gtest.h>

#include "comm/mpi_runtime.h"
#include "fleet/fleet_metrics.h"
#include "fleet/fleet_setup.h"
#include "fleet/routed_request.h"
#include "fleet/timeseries.h"
#include "fleet/workload_reader.h"

namespace fleetsim {
namespace {

TEST(RoutedRequest, SurvivesTheWire) {
  std::vector<std::byte> buffer;
  std::vector<RoutedRequest> sent(3);
  for (int i = 0; i < 3; ++i) {
    RoutedRequest& r = sent[static_cast<std::size_t>(i)];
    r.id = 1000 + i;
    r.gateway = i;
    r.instance = 7 * i;
    r.instance_arrival = 123456789 + i;
    r.request.id = "request-" + std::string(static_cast<std::size_t>(i), 'x');
    r.request.arrival = 123000000 + i;
    r.request.input_tokens = 500 + i;
    r.request.output_tokens = 20 + i;
    r.request.hash_block_size = i == 1 ? 512 : 0;
    r.request.hashes_cover_partial_block = i == 1;
    if (i == 1) r.request.block_hashes = {1, 2, UINT64_MAX};
    if (i == 2) r.request.model = "llama-3.1-70b";
    if (i == 1) {  // handed over by prefill instance 3 to decode instance 7
      r.decode_instance = 7;
      r.prefill.instance = 3;
      r.prefill.arrival = 122000000;
      r.prefill.transfer_end = 123456000;
      r.prefill.transfer_bytes = 390070272;
    }
    AppendRoutedRequest(r, buffer);
  }
  const std::vector<RoutedRequest> got = ParseRoutedRequests(buffer);
  ASSERT_EQ(got.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(got[i].id, sent[i].id);
    EXPECT_EQ(got[i].gateway, sent[i].gateway);
    EXPECT_EQ(got[i].instance, sent[i].instance);
    EXPECT_EQ(got[i].instance_arrival, sent[i].instance_arrival);
    EXPECT_EQ(got[i].request.id, sent[i].request.id);
    EXPECT_EQ(got[i].request.arrival, sent[i].request.arrival);
    EXPECT_EQ(got[i].request.input_tokens, sent[i].request.input_tokens);
    EXPECT_EQ(got[i].request.output_tokens, sent[i].request.output_tokens);
    EXPECT_EQ(got[i].request.hash_block_size, sent[i].request.hash_block_size);
    EXPECT_EQ(got[i].request.hashes_cover_partial_block,
              sent[i].request.hashes_cover_partial_block);
    EXPECT_EQ(got[i].request.block_hashes, sent[i].request.block_hashes);
    EXPECT_EQ(got[i].request.model, sent[i].request.model);
    EXPECT_EQ(got[i].decode_instance, sent[i].decode_instance);
    EXPECT_EQ(got[i].prefill.instance, sent[i].prefill.instance);
    EXPECT_EQ(got[i].prefill.arrival, sent[i].prefill.arrival);
    EXPECT_EQ(got[i].prefill.transfer_end, sent[i].prefill.transfer_end);
    EXPECT_EQ(got[i].prefill.transfer_bytes, sent[i].prefill.transfer_bytes);
  }
  // A request no prefill instance handed over does not carry the (unset) prefill leg.
  std::vector<std::byte> plain, handed;
  AppendRoutedRequest(sent[0], plain);
  RoutedRequest with_leg = sent[0];
  with_leg.prefill.instance = 0;
  AppendRoutedRequest(with_leg, handed);
  EXPECT_EQ(handed.size(), plain.size() + sizeof(PrefillLeg));
  buffer.pop_back();
  EXPECT_THROW(ParseRoutedRequests(buffer), std::runtime_error);
}

// Issue 22 (UBSan): an unfinished request's finish (kNever) plus the client latency
// overflowed.
TEST(RequestRow, AnUnfinishedRequestHasNoFinishTime) {
  RequestRecord r;
  r.name = "u";
  r.arrival = 5'000;
  const output::RequestRow row = RequestRowOf(r, 0, 0, {500, 500});
  EXPECT_EQ(row.finish_ns, -1);
  EXPECT_EQ(row.first_token_ns, -1);
  EXPECT_TRUE(std::isnan(row.e2e_s));
}

TEST(Timeseries, SamplesEachIntervalStartAndSumsTokensByInterval) {
  Timeseries series(2, 1'000'000'000);  // 1 s
  int samples = 0;
  const auto sample_all = [&](const Timeseries::Sampler& sample) {
    ++samples;
    sample(0, 3, 1, 10, 100);
    sample(0, 1, 0, 30, 100);
    sample(1, 2, 2, 5, 50);
  };
  series.SampleUpTo(2'500'000'000, sample_all);  // starts at interval 2: t = 2 s
  series.SampleUpTo(4'000'000'000, sample_all);  // t = 3 s and 4 s
  EXPECT_EQ(samples, 3);
  std::vector<TokenTally> tally;
  AddTokens(tally, 3, 100, 5);
  AddTokens(tally, 3, 50, 7);
  AddTokens(tally, 4, 0, 1);
  ASSERT_EQ(tally.size(), 2u);
  for (const TokenTally& t : tally)
    series.AddTokens(t.bucket, 1, t.prompt_tokens, t.generated_tokens);
  const std::vector<output::TimeseriesRow> rows = series.Reduce({"a", "b"}, MPI_COMM_SELF);
  ASSERT_EQ(rows.size(), 9u);  // 2 groups, then the fleet, x intervals 2, 3, 4
  EXPECT_STREQ(rows[0].group, "a");
  EXPECT_DOUBLE_EQ(rows[0].time_s, 2.0);
  EXPECT_EQ(rows[0].running, 4);
  EXPECT_EQ(rows[0].waiting, 1);
  EXPECT_DOUBLE_EQ(rows[0].kv_usage, 0.2);
  EXPECT_STREQ(rows[4].group, "b");
  EXPECT_DOUBLE_EQ(rows[4].time_s, 3.0);
  EXPECT_DOUBLE_EQ(rows[4].prompt_tokens_per_s, 150);
  EXPECT_DOUBLE_EQ(rows[4].generation_tokens_per_s, 12);
  EXPECT_DOUBLE_EQ(rows[5].generation_tokens_per_s, 1);
  // The fleet: both groups summed, KV usage as all used blocks over all usable ones.
  EXPECT_STREQ(rows[6].group, "fleet");
  EXPECT_DOUBLE_EQ(rows[6].time_s, 2.0);
  EXPECT_EQ(rows[6].running, 3 + 1 + 2);
  EXPECT_EQ(rows[6].waiting, 1 + 0 + 2);
  EXPECT_DOUBLE_EQ(rows[6].kv_usage, (10.0 + 30 + 5) / (100 + 100 + 50));
  EXPECT_DOUBLE_EQ(rows[7].prompt_tokens_per_s, 150);
  EXPECT_DOUBLE_EQ(rows[7].generation_tokens_per_s, 12);
}

TEST(Summary, CountsEveryStateAndGoodputWithinBothSlos) {
  SummaryBuilder summary("g");
  const SloConfig slo{1.0, 0.1};
  const NetworkDelays delays{1'000'000, 2'000'000};  // 1 ms in, 2 ms back
  RequestRecord good;
  good.id = 0;
  good.arrival = 1'000'000;  // at the instance: the gateway saw it at 0
  good.first_token = 500'000'000;
  good.finish = 1'500'000'000;
  good.output_tokens = 11;
  good.state = RequestState::kFinished;
  const output::RequestRow row = RequestRowOf(good, 3, 1, delays);
  EXPECT_EQ(row.arrival_ns, 0);
  EXPECT_EQ(row.first_token_ns, 502'000'000);
  EXPECT_DOUBLE_EQ(row.ttft_s, 0.502);
  EXPECT_DOUBLE_EQ(row.tpot_s, 0.1);
  EXPECT_DOUBLE_EQ(row.e2e_s, 1.502);
  summary.Add(row, slo);
  RequestRecord slow = good;
  slow.id = 1;
  slow.first_token = 1'200'000'000;  // TTFT over 1 s
  summary.Add(RequestRowOf(slow, 3, 1, delays), slo);
  RequestRecord rejected;
  rejected.id = 2;
  rejected.state = RequestState::kRejected;
  rejected.reject_reason = RejectReason::kPromptTooLong;
  summary.Add(RequestRowOf(rejected, 3, 1, delays), slo);
  WorkloadRequest late;
  late.arrival = 9'000'000'000;
  summary.Add(UnroutedRowOf(late, 3, 0), slo);
  const output::SummaryRow s = summary.Build();
  EXPECT_EQ(s.requests, 4);
  EXPECT_EQ(s.finished, 2);
  EXPECT_EQ(s.rejected, 1);
  EXPECT_EQ(s.unfinished, 1);
  EXPECT_DOUBLE_EQ(s.slo_attainment, 0.25);
  EXPECT_NEAR(s.ttft_p50_s, 0.502, 0.502 * 0.005);
}

TEST(Gateways, RequestsSpreadOverEveryGateway) {
  std::vector<int> count(5, 0);
  for (int64_t id = 0; id < 10000; ++id)
    ++count[static_cast<std::size_t>(GatewayOf(id, 5))];
  for (int c : count)
    EXPECT_NEAR(c, 2000, 200);
  EXPECT_EQ(GatewayOf(42, 1), 0);
}

}  // namespace
}  // namespace fleetsim

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  // As fleetsim starts MPI (ctest runs the discovered tests as separate singletons).
  fleetsim::comm::MpiRuntime mpi(&argc, &argv);
  return RUN_ALL_TESTS();
}
