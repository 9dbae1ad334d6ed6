// Every real trace in ../shared/data/traces read as it is: row counts, time spans and
// token statistics as the data README states them.
#include <algorithm>
#include <cmath>

#include <gtest/gtest.h>

#include "support/input_error.h"
#include "support/shared_data.h"
#include "support/temp_file.h"
#include "workload/trace_importers.h"
#include "workload/workload_source.h"

namespace fleetsim {
namespace {

struct TraceStats {
  int64_t rows = 0;
  SimTime last_arrival = 0;
  std::vector<int64_t> inputs, outputs;
  bool hashes_match_blocks = true;
  int64_t Median(std::vector<int64_t> v) const {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  }
  double Mean(const std::vector<int64_t>& v) const {
    double sum = 0;
    for (int64_t x : v)
      sum += static_cast<double>(x);
    return sum / static_cast<double>(v.size());
  }
};

TraceStats Read(const std::string& relative, const std::string& expected_format) {
  auto source = OpenWorkload((testing::SharedDataDir() / "traces" / relative).string(), "auto");
  EXPECT_EQ(source->format(), expected_format);
  TraceStats s;
  while (auto r = source->Next()) {
    if (s.rows == 0) {
      EXPECT_EQ(r->arrival, 0);
    }
    ++s.rows;
    s.last_arrival = r->arrival;
    s.inputs.push_back(r->input_tokens);
    s.outputs.push_back(r->output_tokens);
    if (r->hash_block_size > 0) {
      s.hashes_match_blocks =
          s.hashes_match_blocks &&
          static_cast<int64_t>(r->block_hashes.size()) == (r->input_tokens + 511) / 512;
    }
  }
  return s;
}

TEST(TraceImporters, AzureLlm2023) {
  FLEETSIM_REQUIRE_SHARED_DATA();
  const TraceStats code = Read("azure_llm_2023/AzureLLMInferenceTrace_code.csv", "azure");
  EXPECT_EQ(code.rows, 8819);
  EXPECT_NEAR(ToSeconds(code.last_arrival), 3435.9, 0.05);  // 18:17:03.98 -> 19:14:19.93
  EXPECT_EQ(*std::min_element(code.inputs.begin(), code.inputs.end()), 3);
  EXPECT_EQ(code.Median(code.inputs), 1469);
  EXPECT_EQ(*std::max_element(code.inputs.begin(), code.inputs.end()), 7437);
  EXPECT_EQ(code.Median(code.outputs), 13);
  EXPECT_EQ(*std::max_element(code.outputs.begin(), code.outputs.end()), 1899);
  const TraceStats conv = Read("azure_llm_2023/AzureLLMInferenceTrace_conv.csv", "azure");
  EXPECT_EQ(conv.rows, 19366);
  EXPECT_NEAR(ToSeconds(conv.last_arrival), 3501.7, 0.05);
  EXPECT_EQ(conv.Median(conv.inputs), 1020);
  EXPECT_EQ(*std::max_element(conv.inputs.begin(), conv.inputs.end()), 14050);
  EXPECT_EQ(conv.Median(conv.outputs), 129);
  EXPECT_EQ(*std::max_element(conv.outputs.begin(), conv.outputs.end()), 1000);
}

TEST(TraceImporters, VidurProcessedMatchesTheAzureTraces) {
  FLEETSIM_REQUIRE_SHARED_DATA();
  const TraceStats conv = Read("vidur_processed/splitwise_conv.csv", "vidur");
  EXPECT_EQ(conv.rows, 19366);
  EXPECT_NEAR(ToSeconds(conv.last_arrival), 3501.72, 0.01);
  EXPECT_EQ(conv.Median(conv.inputs), 1020);
  const TraceStats code = Read("vidur_processed/splitwise_code.csv", "vidur");
  EXPECT_EQ(code.rows, 8819);
  EXPECT_NEAR(ToSeconds(code.last_arrival), 3435.95, 0.01);
  // The arxiv file has lengths only: refused as a trace, with the reason.
  const InputError e = testing::CatchInputError([] {
    OpenWorkload(
        (testing::SharedDataDir() /
         "traces/vidur_processed/arxiv_summarization_stats_llama2_tokenizer_filtered_v2.csv")
            .string(),
        "auto");
  });
  EXPECT_TRUE(testing::Mentions(e, "lengths only"));
}

TEST(TraceImporters, Mooncake) {
  FLEETSIM_REQUIRE_SHARED_DATA();
  const TraceStats conv = Read("mooncake_fast25/conversation_trace.jsonl", "mooncake");
  EXPECT_EQ(conv.rows, 12031);
  EXPECT_EQ(conv.last_arrival, 3'536'999'000'000);  // 3,536,999 ms
  EXPECT_NEAR(conv.Mean(conv.inputs), 12035, 1);
  EXPECT_NEAR(conv.Mean(conv.outputs), 343, 1);
  EXPECT_TRUE(conv.hashes_match_blocks);
  const TraceStats synthetic = Read("mooncake_fast25/synthetic_trace.jsonl", "mooncake");
  EXPECT_EQ(synthetic.rows, 3993);
  EXPECT_EQ(synthetic.last_arrival, 1'022'025'000'000);
  EXPECT_NEAR(synthetic.Mean(synthetic.inputs), 15325, 1);
  EXPECT_NEAR(synthetic.Mean(synthetic.outputs), 149, 1);
}

TEST(TraceImporters, VllmBenchRuns) {
  FLEETSIM_REQUIRE_SHARED_DATA();
  for (const char* run : {"RTX4090/Llama-3.1-8B", "RTXPRO6000/Llama-3.1-8B",
                          "RTXPRO6000/Qwen3-30B-A3B-Instruct-2507"}) {
    EXPECT_EQ(
        Read(std::string("llmservingsim_vllm_bench/") + run + "/requests.jsonl", "vllm-bench").rows,
        300)
        << run;
  }
}

TEST(TraceImporters, WallClockParsingIsExact) {
  int64_t a = 0, b = 0;
  ASSERT_TRUE(ParseWallClock("2023-11-16 18:17:03.9799600", a));
  ASSERT_TRUE(ParseWallClock("2023-11-16 19:14:19.9339600", b));
  EXPECT_EQ(b - a, 3'435'954'000'000);
  ASSERT_TRUE(ParseWallClock("1970-01-01 00:00:01", a));
  EXPECT_EQ(a, kNsPerSecond);
  EXPECT_FALSE(ParseWallClock("2023-11-16T18:17:03", a));
  EXPECT_FALSE(ParseWallClock("2023-13-16 18:17:03.1", a));
}

TEST(TraceImporters, BadRowsNameTheLineAndColumn) {
  testing::TempFile azure(
      "a.csv",
      "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03.9799600,10,2\n"
      "2023-11-16 18:17:0x.1,10,2\n");
  auto source = OpenWorkload(azure.path(), "auto");
  ASSERT_TRUE(source->Next());
  const InputError e = testing::CatchInputError([&] { source->Next(); });
  EXPECT_EQ(e.line(), 3);
  EXPECT_EQ(e.field(), "TIMESTAMP");
  testing::TempFile mooncake(
      "m.jsonl",
      "{\"timestamp\": 0, \"input_length\": 1000, \"output_length\": 5, \"hash_ids\": [1]}\n");
  auto mc = OpenWorkload(mooncake.path(), "auto");
  EXPECT_EQ(testing::CatchInputError([&] { mc->Next(); }).field(),
            "hash_ids");  // 1000 tokens need 2 ids
}

TEST(MapBlockHashes, EngineBlocksTakeTheTraceBlockHoldingTheirLastToken) {
  WorkloadRequest a;
  a.input_tokens = 1100;  // blocks of 512: ids 7, 8 and a partial third
  a.block_hashes = {7, 8, 9};
  a.hash_block_size = 512;
  a.hashes_cover_partial_block = true;
  WorkloadRequest b = a;
  b.block_hashes = {7, 5, 6};  // shares only the first 512 tokens
  // Block 16: 68 full engine blocks; the first 32 lie in trace block 0.
  const auto ha = MapBlockHashes(a, 16), hb = MapBlockHashes(b, 16);
  ASSERT_EQ(ha.size(), 68u);
  for (int i = 0; i < 32; ++i)
    EXPECT_EQ(ha[static_cast<std::size_t>(i)], hb[static_cast<std::size_t>(i)]) << i;
  EXPECT_NE(ha[32], hb[32]);
  EXPECT_NE(ha[0], ha[1]);  // distinct per engine block index
  // Block 784: one full engine block (tokens 0..783) ends in trace block 1: shared only when
  // the first 1,024 tokens are.
  const auto ca = MapBlockHashes(a, 784), cb = MapBlockHashes(b, 784);
  ASSERT_EQ(ca.size(), 1u);
  EXPECT_NE(ca[0], cb[0]);
  WorkloadRequest c = a;
  c.block_hashes = {7, 8, 42};
  EXPECT_EQ(MapBlockHashes(c, 784)[0], ca[0]);
}

}  // namespace
}  // namespace fleetsim
