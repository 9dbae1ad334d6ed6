// The `trace` length distribution: lengths resampled from a real trace
// (sim/workload/length_sample.h, sim/workload/generator_lengths.h).
#include "workload/length_sample.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "support/input_error.h"
#include "support/shared_data.h"
#include "support/temp_file.h"
#include "workload/generator.h"
#include "workload/generator_spec.h"

namespace fleetsim {
namespace {

using testing::CatchInputError;
using testing::Mentions;
using testing::TempFile;
using workload_gen::GeneratorSpec;
using workload_gen::TraceLengthSample;

// A native JSONL trace of (input, output) rows, one second apart.
std::string NativeTrace(const std::vector<std::pair<int64_t, int64_t>>& rows) {
  std::string out;
  for (size_t i = 0; i < rows.size(); ++i) {
    out += "{\"arrival_s\": " + std::to_string(i) +
           ", \"input_tokens\": " + std::to_string(rows[i].first) +
           ", \"output_tokens\": " + std::to_string(rows[i].second) + "}\n";
  }
  return out;
}

// Inputs 10, 20, 30, 40, 50 appearing 1, 2, 3, 4, 5 times (interleaved); output = 1000 + input.
std::vector<std::pair<int64_t, int64_t>> WeightedRows() {
  std::vector<std::pair<int64_t, int64_t>> rows;
  for (int64_t round = 0; round < 5; ++round) {
    for (int64_t v = 1; v <= 5; ++v) {
      if (round < v) rows.emplace_back(10 * v, 1000 + 10 * v);
    }
  }
  return rows;
}

// Inputs 1..n in order, output = input.
std::vector<std::pair<int64_t, int64_t>> CountingRows(int64_t n) {
  std::vector<std::pair<int64_t, int64_t>> rows;
  for (int64_t i = 1; i <= n; ++i)
    rows.emplace_back(i, i);
  return rows;
}

// Line 1 `generator:`, then seed (2), num_requests (3), arrivals (4), input_tokens (5),
// output_tokens (6).
std::string Body(const std::string& input, const std::string& output, int64_t seed = 7,
                 int64_t num_requests = 20000) {
  return "generator:\n  seed: " + std::to_string(seed) +
         "\n  num_requests: " + std::to_string(num_requests) +
         "\n  arrivals: {process: poisson, rate_per_s: 5}\n  input_tokens: " + input +
         "\n  output_tokens: " + output + "\n";
}

const char kFixedOutput[] = "{distribution: fixed, value: 1}";

// Writes a spec beside `trace` (removed with it), so it can name the trace by a relative path.
std::string WriteSpec(const TempFile& trace, const std::string& name, const std::string& text) {
  const std::string path = (trace.dir() / name).string();
  std::ofstream(path) << text;
  return path;
}

std::vector<WorkloadRequest> ReadAll(const std::string& path) {
  auto source = OpenGeneratedWorkload(path);
  std::vector<WorkloadRequest> out;
  while (auto r = source->Next())
    out.push_back(std::move(*r));
  return out;
}

GeneratorSpec LoadSpec(const std::string& path) {
  return GeneratorSpec::Parse(LoadYamlFile(path));
}

// The upper median (a value of the data).
double Median(std::vector<int64_t> xs) {
  const auto mid = xs.begin() + static_cast<std::ptrdiff_t>(xs.size() / 2);
  std::nth_element(xs.begin(), mid, xs.end());
  return static_cast<double>(*mid);
}

TEST(TraceLengths, DrawOnlyTheTracesValuesAtItsFrequencies) {
  const auto rows = WeightedRows();
  TempFile trace("trace.jsonl", NativeTrace(rows));
  const std::string spec = WriteSpec(trace, "spec.yaml",
                                     Body("{distribution: trace, path: trace.jsonl}",
                                          "{distribution: trace, path: ./trace.jsonl}"));
  // sample_rows (100,000 by default) >= rows: the sample is the whole trace.
  const GeneratorSpec parsed = LoadSpec(spec);
  ASSERT_NE(parsed.input_tokens.trace_sample(), nullptr);
  std::vector<int64_t> kept = parsed.input_tokens.trace_sample()->values();
  std::vector<int64_t> inputs;
  for (const auto& [in, out] : rows)
    inputs.push_back(in);
  std::sort(kept.begin(), kept.end());
  std::sort(inputs.begin(), inputs.end());
  EXPECT_EQ(kept, inputs);
  EXPECT_EQ(parsed.input_tokens.trace_sample()->rows(), 15);

  const auto rs = ReadAll(spec);
  ASSERT_EQ(rs.size(), 20000u);
  std::map<int64_t, int> input_count, output_count;
  for (const auto& r : rs) {
    ++input_count[r.input_tokens];
    ++output_count[r.output_tokens];
  }
  ASSERT_EQ(input_count.size(), 5u);
  ASSERT_EQ(output_count.size(), 5u);
  for (int64_t v = 1; v <= 5; ++v) {
    SCOPED_TRACE(v);
    const double expected = static_cast<double>(v) / 15.0;  // the trace's frequency
    EXPECT_NEAR(input_count[10 * v] / 20000.0, expected, 0.015);
    EXPECT_NEAR(output_count[1000 + 10 * v] / 20000.0, expected, 0.015);
  }
}

TEST(TraceLengths, FieldAndFormatChooseTheColumnAndTheReader) {
  TempFile trace("trace.jsonl", NativeTrace(WeightedRows()));
  const std::string spec =
      WriteSpec(trace, "spec.yaml",
                Body("{distribution: trace, path: trace.jsonl, format: native, field: output}",
                     "{distribution: trace, path: trace.jsonl, field: input}", 7, 2000));
  for (const auto& r : ReadAll(spec)) {
    EXPECT_GT(r.input_tokens, 1000);
    EXPECT_LT(r.output_tokens, 1000);
  }

  TempFile azure("azure.csv",
                 "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                 "2023-11-16 18:15:46.6805900,374,44\n"
                 "2023-11-16 18:15:50.9951690,396,109\n"
                 "2023-11-16 18:15:51.0707050,879,251\n");
  const std::string azure_spec =
      WriteSpec(azure, "spec.yaml",
                Body("{distribution: trace, path: azure.csv}",
                     "{distribution: trace, path: azure.csv, format: azure}", 7, 2000));
  std::set<int64_t> in, out;
  for (const auto& r : ReadAll(azure_spec)) {
    in.insert(r.input_tokens);
    out.insert(r.output_tokens);
  }
  EXPECT_EQ(in, (std::set<int64_t>{374, 396, 879}));
  EXPECT_EQ(out, (std::set<int64_t>{44, 109, 251}));
}

TEST(TraceLengths, SampleRowsBoundsTheSampleAndIsDeterministic) {
  TempFile trace("trace.jsonl", NativeTrace(CountingRows(1000)));
  const std::string input = "{distribution: trace, path: trace.jsonl, sample_rows: 100}";
  const std::string spec = WriteSpec(trace, "spec.yaml", Body(input, kFixedOutput, 7, 2000));
  const GeneratorSpec a = LoadSpec(spec);
  const GeneratorSpec b = LoadSpec(spec);
  const TraceLengthSample& sample = *a.input_tokens.trace_sample();
  EXPECT_EQ(sample.rows(), 1000);
  ASSERT_EQ(sample.values().size(), 100u);
  EXPECT_EQ(sample.values(), b.input_tokens.trace_sample()->values());
  const std::set<int64_t> kept(sample.values().begin(), sample.values().end());
  EXPECT_EQ(kept.size(), 100u);  // distinct rows of the trace
  EXPECT_GE(*kept.begin(), 1);
  EXPECT_LE(*kept.rbegin(), 1000);
  for (const auto& r : ReadAll(spec))
    ASSERT_TRUE(kept.count(r.input_tokens)) << r.input_tokens;

  const GeneratorSpec other =
      LoadSpec(WriteSpec(trace, "other.yaml", Body(input, kFixedOutput, 8)));
  EXPECT_NE(other.input_tokens.trace_sample()->values(), sample.values());

  // Every row is kept with probability 100/1000, early or late in the trace.
  int first_tenth = 0, first_half = 0;
  for (int64_t seed = 0; seed < 60; ++seed) {
    const GeneratorSpec s = LoadSpec(
        WriteSpec(trace, "s" + std::to_string(seed) + ".yaml", Body(input, kFixedOutput, seed)));
    for (int64_t v : s.input_tokens.trace_sample()->values()) {
      first_tenth += v <= 100 ? 1 : 0;
      first_half += v <= 500 ? 1 : 0;
    }
  }
  EXPECT_NEAR(first_tenth, 600, 90);   // of 6000 kept; sd about 22
  EXPECT_NEAR(first_half, 3000, 150);  // sd about 37
}

TEST(TraceLengths, SameSpecSameRequestsAndEachRequestOnItsOwnStream) {
  TempFile trace("trace.jsonl", NativeTrace(CountingRows(1000)));
  const std::string input = "{distribution: trace, path: trace.jsonl, sample_rows: 500}";
  const std::string output = "{distribution: trace, path: trace.jsonl}";
  const auto a = ReadAll(WriteSpec(trace, "a.yaml", Body(input, output, 42, 300)));
  const auto b = ReadAll(WriteSpec(trace, "b.yaml", Body(input, output, 42, 300)));
  const auto c = ReadAll(WriteSpec(trace, "c.yaml", Body(input, output, 43, 300)));
  const auto few = ReadAll(WriteSpec(trace, "few.yaml", Body(input, output, 42, 50)));
  ASSERT_EQ(a.size(), 300u);
  ASSERT_EQ(b.size(), 300u);
  size_t differ = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].arrival, b[i].arrival) << i;
    ASSERT_EQ(a[i].input_tokens, b[i].input_tokens) << i;
    ASSERT_EQ(a[i].output_tokens, b[i].output_tokens) << i;
    if (a[i].input_tokens != c[i].input_tokens) ++differ;
  }
  EXPECT_GT(differ, 250u);
  ASSERT_EQ(few.size(), 50u);
  for (size_t i = 0; i < few.size(); ++i) {
    ASSERT_EQ(few[i].input_tokens, a[i].input_tokens) << i;
    ASSERT_EQ(few[i].output_tokens, a[i].output_tokens) << i;
  }
}

TEST(TraceLengths, MinAndMaxClamp) {
  TempFile trace("trace.jsonl", NativeTrace(CountingRows(1000)));
  const auto rs = ReadAll(WriteSpec(
      trace, "spec.yaml",
      Body("{distribution: trace, path: trace.jsonl, min: 100, max: 900}", kFixedOutput)));
  int at_min = 0;
  for (const auto& r : rs) {
    ASSERT_GE(r.input_tokens, 100);
    ASSERT_LE(r.input_tokens, 900);
    at_min += r.input_tokens == 100 ? 1 : 0;
  }
  EXPECT_NEAR(at_min, 2000, 200);  // trace values 1..100: a tenth of 20,000
}

TEST(TraceLengths, BadSpecsNameTheSpecTheLineAndTheKey) {
  TempFile trace("trace.jsonl", NativeTrace(WeightedRows()));
  std::ofstream(trace.dir() / "empty.jsonl") << "";
  std::ofstream(trace.dir() / "header.csv") << "TIMESTAMP,ContextTokens,GeneratedTokens\n";
  std::ofstream(trace.dir() / "broken.jsonl")
      << "{\"arrival_s\": 0, \"input_tokens\": 5, \"output_tokens\": 5}\n"
         "{\"arrival_s\": 1, \"input_tokens\": -3, \"output_tokens\": 5}\n";
  struct Case {
    std::string input, field, mentions;
  };
  const Case cases[] = {
      {"{distribution: trace, path: missing.jsonl}", "path", "missing.jsonl"},
      {"{distribution: trace, path: empty.jsonl}", "path", "empty"},
      {"{distribution: trace, path: header.csv, format: azure}", "path", "no requests"},
      {"{distribution: trace, path: broken.jsonl}", "path", "broken.jsonl:2"},
      {"{distribution: trace, path: spec.yaml}", "path", "generator spec"},
      {"{distribution: trace, path: trace.jsonl, field: prompt}", "field", "input, output"},
      {"{distribution: trace, path: trace.jsonl, bins: 4}", "bins", "bins"},
      {"{distribution: trace, path: trace.jsonl, format: csv}", "format", "mooncake"},
      {"{distribution: trace, path: trace.jsonl, format: generator}", "format", "generator"},
      {"{distribution: trace, path: trace.jsonl, sample_rows: 0}", "sample_rows", ">= 1"},
      {"{distribution: trace, path: trace.jsonl, sample_rows: 20000000}", "sample_rows", "at most"},
      {"{distribution: trace, path: trace.jsonl, min: 50, max: 10}", "max", "min"},
      {"{distribution: trace}", "path", "missing"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.input);
    const std::string spec = WriteSpec(trace, "spec.yaml", Body(c.input, kFixedOutput));
    const InputError e = CatchInputError([&] { OpenGeneratedWorkload(spec); });
    EXPECT_EQ(e.file(), spec);
    EXPECT_EQ(e.line(), 5);
    EXPECT_EQ(e.field(), "generator.input_tokens." + c.field) << e.what();
    EXPECT_TRUE(Mentions(e, c.mentions)) << e.what();
  }

  const std::string turns =
      WriteSpec(trace, "turns.yaml",
                Body("{distribution: fixed, value: 5}", kFixedOutput) +
                    "  sessions: {turns: {distribution: trace, path: trace.jsonl}}\n");
  const InputError e = CatchInputError([&] { OpenGeneratedWorkload(turns); });
  EXPECT_EQ(e.file(), turns);
  EXPECT_EQ(e.line(), 7);
  EXPECT_EQ(e.field(), "generator.sessions.turns.distribution") << e.what();
}

// The Azure 2023 conversation trace (../shared/data/traces/azure_llm_2023, whose README
// gives median ContextTokens 1020 and GeneratedTokens 129 over 19,366 rows).
TEST(TraceLengths, ResampledAzureConversationKeepsTheTracesMedians) {
  FLEETSIM_REQUIRE_SHARED_DATA();
  const std::string conv =
      (testing::SharedDataDir() / "traces/azure_llm_2023/AzureLLMInferenceTrace_conv.csv")
          .lexically_normal()
          .string();
  std::vector<int64_t> trace_in, trace_out;
  auto source = OpenWorkload(conv, "auto");
  while (auto r = source->Next()) {
    trace_in.push_back(r->input_tokens);
    trace_out.push_back(r->output_tokens);
  }
  ASSERT_EQ(trace_in.size(), 19366u);
  const double in_median = Median(trace_in), out_median = Median(trace_out);
  EXPECT_NEAR(in_median, 1020, 1);
  EXPECT_NEAR(out_median, 129, 1);

  for (const std::string rows : {"100000", "2000"}) {
    SCOPED_TRACE(rows);
    TempFile spec(
        "conv.yaml",
        Body("{distribution: trace, path: '" + conv + "', sample_rows: " + rows + "}",
             "{distribution: trace, path: '" + conv + "', sample_rows: " + rows + "}", 2026));
    const GeneratorSpec parsed = LoadSpec(spec.path());
    EXPECT_EQ(parsed.input_tokens.trace_sample()->values().size(),
              std::min<size_t>(trace_in.size(), std::stoul(rows)));
    std::vector<int64_t> in, out;
    for (const auto& r : ReadAll(spec.path())) {
      in.push_back(r.input_tokens);
      out.push_back(r.output_tokens);
    }
    const double sample_in = Median(in), sample_out = Median(out);
    RecordProperty("input_median_sample_rows_" + rows,
                   std::to_string(static_cast<int64_t>(sample_in)));
    RecordProperty("output_median_sample_rows_" + rows,
                   std::to_string(static_cast<int64_t>(sample_out)));
    EXPECT_NEAR(sample_in, in_median, 0.1 * in_median);
    EXPECT_NEAR(sample_out, out_median, 0.1 * out_median);
  }
  RecordProperty("input_median_trace", std::to_string(static_cast<int64_t>(in_median)));
  RecordProperty("output_median_trace", std::to_string(static_cast<int64_t>(out_median)));
}

}  // namespace
}  // namespace fleetsim
