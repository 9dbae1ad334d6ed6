#include "workload/workload_source.h"

#include <fstream>
#include <sys/stat.h>
#include <thread>

#include <gtest/gtest.h>

#include "support/input_error.h"
#include "support/shared_data.h"
#include "support/temp_file.h"
#include "workload/workload_window.h"

namespace fleetsim {
namespace {

using testing::CatchInputError;
using testing::TempFile;

TEST(WorkloadSource, ReadsNativeJsonlInOrder) {
  TempFile file("t.jsonl",
                "{\"id\": \"a\", \"arrival_s\": 0.5, \"input_tokens\": 40, \"output_tokens\": 3,"
                " \"block_hashes\": [7, 8], \"hash_block_size\": 16}\n"
                "\n"
                "{\"arrival_ns\": 600000000, \"input_tokens\": 5, \"output_tokens\": 1}\n");
  auto source = OpenWorkload(file.path(), "auto");
  EXPECT_EQ(source->format(), "native");
  auto a = source->Next();
  ASSERT_TRUE(a);
  EXPECT_EQ(a->id, "a");
  EXPECT_EQ(a->arrival, 500'000'000);
  EXPECT_EQ(a->block_hashes, (std::vector<uint64_t>{7, 8}));
  EXPECT_EQ(a->hash_block_size, 16);
  auto b = source->Next();
  ASSERT_TRUE(b);
  EXPECT_EQ(b->id, "3");  // no id: its line number
  EXPECT_EQ(b->arrival, 600'000'000);
  EXPECT_FALSE(source->Next());
}

TEST(WorkloadSource, AByteOrderMarkBeforeTheFirstLineIsSkipped) {
  TempFile file("t.jsonl",
                "\xEF\xBB\xBF{\"arrival_s\": 0, \"input_tokens\": 4, \"output_tokens\": 1}\n"
                "\xEF\xBB\xBF{\"arrival_s\": 1, \"input_tokens\": 4, \"output_tokens\": 1}\n");
  auto source = OpenWorkload(file.path(), "native");
  ASSERT_TRUE(source->Next());
  EXPECT_EQ(CatchInputError([&] { source->Next(); }).line(), 2);  // only at the start
}

TEST(WorkloadSource, BadLinesNameTheLineAndTheField) {
  struct Case {
    std::string second_line, field;
  };
  const Case cases[] = {
      {"{\"arrival_s\": 1, \"input_tokens\": \"x\", \"output_tokens\": 1}", "input_tokens"},
      {"{\"arrival_s\": 1, \"input_tokens\": 4, \"output_tokens\": 0}", "output_tokens"},
      {"{\"input_tokens\": 4, \"output_tokens\": 1}", "arrival_s"},
      {"{\"arrival_s\": 0.1, \"input_tokens\": 4, \"output_tokens\": 1}",
       "arrival_s"},  // back in time
      {"{\"arrival_s\": 1, \"input_tokens\": 20, \"output_tokens\": 1, \"block_hashes\": [1, 2, 3],"
       " \"hash_block_size\": 16}",
       "block_hashes"},  // three hashes, two started blocks
      {"{\"arrival_s\": 1, \"input_tokens\": 4.5, \"output_tokens\": 1}", "input_tokens"},
      {"{\"arrival_s\": \"1\", \"input_tokens\": 4, \"output_tokens\": 1}", "arrival_s"},
      {"{\"id\": [1], \"arrival_s\": 1, \"input_tokens\": 4, \"output_tokens\": 1}", "id"},
      {"{\"arrival_s\": 1, \"input_tokens\": 20, \"output_tokens\": 1, \"block_hashes\": [1, -2],"
       " \"hash_block_size\": 16}",
       "block_hashes"},
      {"{\"arrival_s\": 1, \"input_tokens\": 20, \"output_tokens\": 1, \"block_hashes\": [1]}",
       "hash_block_size"},
      {"[1, 2]", ""},
      {"{\"arrival_s\": 1, \"input_tokens\": 4,", ""},
      {"{\"arrival_s\": 1, \"input_tokens\": 4, \"input_tokens\": 5, \"output_tokens\": 1}", ""},
      {"{arrival_s: 1, input_tokens: 4, output_tokens: 1}", ""},  // YAML, not JSON
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.second_line);
    TempFile file("t.jsonl", "{\"arrival_s\": 0.5, \"input_tokens\": 4, \"output_tokens\": 1}\n" +
                                 c.second_line + "\n");
    auto source = OpenWorkload(file.path(), "native");
    ASSERT_TRUE(source->Next());
    const InputError e = CatchInputError([&] { source->Next(); });
    EXPECT_EQ(e.line(), 2);
    EXPECT_EQ(e.field(), c.field);
  }
}

TEST(WorkloadSource, UnknownFormatsAreRefused) {
  TempFile file("t.jsonl", "{\"prompt\": \"hello\"}\n");
  EXPECT_EQ(CatchInputError([&] { OpenWorkload(file.path(), "auto"); }).line(), 1);
  EXPECT_EQ(CatchInputError([&] { OpenWorkload(file.path(), "csv"); }).field(), "--format");
}

TEST(WorkloadSource, ReadsAVllmBenchRunRebasedToItsFirstArrival) {
  FLEETSIM_REQUIRE_SHARED_DATA();
  auto source = OpenWorkload((testing::SharedDataDir() /
                              "traces/llmservingsim_vllm_bench/RTX4090/Llama-3.1-8B/requests.jsonl")
                                 .string(),
                             "auto");
  EXPECT_EQ(source->format(), "vllm-bench");
  int count = 0;
  SimTime last = 0;
  while (auto r = source->Next()) {
    if (count == 0) {
      EXPECT_EQ(r->arrival, 0);
      EXPECT_EQ(r->id, "bench-0");
      EXPECT_EQ(r->input_tokens, 2358);
      EXPECT_EQ(r->output_tokens, 531);
    }
    EXPECT_GE(r->arrival, last);
    last = r->arrival;
    ++count;
  }
  EXPECT_EQ(count, 300);
  // 300 Poisson arrivals at 10 per second: about 29 s.
  EXPECT_GT(last, 25 * kNsPerSecond);
  EXPECT_LT(last, 35 * kNsPerSecond);
}

WindowOptions Window(double scale, std::optional<SimTime> duration, std::optional<int64_t> limit,
                     bool skip) {
  WindowOptions options;
  options.rate_scale = scale;
  options.duration = duration;
  options.num_requests = limit;
  options.skip_bad_lines = skip;
  return options;
}

TEST(WorkloadWindow, ScalesLimitsAndSkipsWhatItIsAskedTo) {
  std::string trace;
  for (int i = 0; i < 10; ++i) {
    trace += i == 4 ? "{\"arrival_s\": 4, \"input_tokens\": \"bad\", \"output_tokens\": 1}\n"
                    : "{\"arrival_s\": " + std::to_string(i) +
                          ", \"input_tokens\": 8, \"output_tokens\": 1}\n";
  }
  TempFile file("t.jsonl", trace);
  auto arrivals = [&](WindowOptions options, int64_t* skipped = nullptr) {
    WorkloadWindow w(OpenWorkload(file.path(), "native"), options);
    std::vector<SimTime> out;
    while (auto r = w.Next())
      out.push_back(r->arrival);
    if (skipped != nullptr) *skipped = w.skipped_lines();
    return out;
  };
  // Without skipping, the bad line stops the run where it is.
  EXPECT_THROW(arrivals({}), InputError);
  int64_t skipped = 0;
  const auto all = arrivals(Window(1, std::nullopt, std::nullopt, true), &skipped);
  EXPECT_EQ(all.size(), 9u);
  EXPECT_EQ(skipped, 1);
  // Twice the rate: arrivals at half the times. A 2.5 s window keeps 0, 0.5, 1 and 1.5 (the
  // line at 2 s is the bad one, skipped; 2.5 s ends the window).
  const auto fast = arrivals(Window(2.0, SecondsToSimTime(2.5), std::nullopt, true));
  EXPECT_EQ(fast, (std::vector<SimTime>{0, 500'000'000, 1'000'000'000, 1'500'000'000}));
  EXPECT_EQ(arrivals(Window(1, std::nullopt, 3, false)).size(), 3u);
  EXPECT_THROW(WorkloadWindow(OpenWorkload(file.path(), "native"),
                              Window(0, std::nullopt, std::nullopt, false)),
               InputError);
}

// A window over a generator of independent requests passes over a request as it makes
// one: the same scaling, duration and request limit, so the arrivals match Next's.
TEST(WorkloadWindow, PassesOverARequestUnderTheSameRulesAsItMakesOne) {
  TempFile spec("g.yaml",
                "generator:\n  seed: 4\n  num_requests: 400\n"
                "  arrivals: {process: poisson, rate_per_s: 20}\n"
                "  input_tokens: {distribution: uniform, min: 10, max: 90}\n"
                "  output_tokens: {distribution: uniform, min: 1, max: 9}\n");
  for (const WindowOptions& options :
       {Window(1, std::nullopt, std::nullopt, false), Window(2.5, SecondsToSimTime(6), 1000, false),
        Window(0.5, std::nullopt, 123, false)}) {
    std::vector<SimTime> made;
    WorkloadWindow all(OpenWorkload(spec.path(), "generator"), options);
    while (auto r = all.Next())
      made.push_back(r->arrival);
    WorkloadWindow mixed(OpenWorkload(spec.path(), "generator"), options);
    ASSERT_TRUE(mixed.can_pass_over());
    std::vector<SimTime> seen;
    for (std::size_t i = 0;; ++i) {
      const std::optional<SimTime> arrival =
          i % 3 == 0 ? mixed.PassOver() : [&]() -> std::optional<SimTime> {
        auto r = mixed.Next();
        return r ? std::optional<SimTime>(r->arrival) : std::nullopt;
      }();
      if (!arrival) break;
      seen.push_back(*arrival);
    }
    EXPECT_EQ(seen, made);
    EXPECT_GT(made.size(), 100u);
  }
  // A strict model list can make a request a bad line by its model: never passed over.
  WindowOptions strict;
  strict.known_models = std::vector<std::string>{"m"};
  EXPECT_FALSE(WorkloadWindow(OpenWorkload(spec.path(), "generator"), strict).can_pass_over());
  // Nor with --skip-bad-lines: a skipped line would take no position.
  EXPECT_FALSE(WorkloadWindow(OpenWorkload(spec.path(), "generator"),
                              Window(1, std::nullopt, std::nullopt, true))
                   .can_pass_over());
  // A trace is read line by line: never passed over.
  TempFile trace("t.jsonl", "{\"arrival_s\": 0, \"input_tokens\": 8, \"output_tokens\": 1}\n");
  EXPECT_FALSE(WorkloadWindow(OpenWorkload(trace.path(), "native"), {}).can_pass_over());
}

// Issue 22: times past the largest simulated time, duplicate and over-long ids are refused
// at their line instead of overflowing the clock or merging rows.
std::string ErrorOf(const std::string& name, const std::string& text) {
  TempFile file(name, text);
  return CatchInputError([&] {
           auto source = OpenWorkload(file.path(), "auto");
           while (source->Next()) {
           }
         })
      .what();
}

TEST(WorkloadSource, ArrivalPastTheLargestSimulatedTimeIsRefusedAtItsLine) {
  const std::string error =
      ErrorOf("t.jsonl",
              "{\"arrival_s\": 0.5, \"input_tokens\": 5, \"output_tokens\": 1}\n"
              "{\"arrival_s\": 1e10, \"input_tokens\": 5, \"output_tokens\": 1}\n");
  EXPECT_NE(error.find("t.jsonl:2: arrival_s: must be at most 1e9 s"), std::string::npos) << error;
  EXPECT_NE(ErrorOf("t.jsonl",
                    "{\"arrival_ns\": 2000000000000000000, \"input_tokens\": 5, "
                    "\"output_tokens\": 1}\n")
                .find("t.jsonl:1: arrival_ns: must be at most"),
            std::string::npos);
}

TEST(WorkloadSource, VllmBenchQueuedTsPastTheLargestSimulatedTimeIsRefused) {
  const std::string line =
      "\"input_toks\": 5, \"output_toks\": 2, \"first_token_ts\": 1, \"last_token_ts\": 2}\n";
  const std::string error =
      ErrorOf("r.jsonl", "{\"request_id\": \"a\", \"queued_ts\": 1.0, " + line +
                             "{\"request_id\": \"b\", \"queued_ts\": "
                             "1e18, " +
                             line);
  EXPECT_NE(error.find("r.jsonl:2: queued_ts:"), std::string::npos) << error;
  EXPECT_NE(error.find("largest simulated time"), std::string::npos) << error;
}

TEST(WorkloadSource, DuplicateIdsAreRefusedAtTheSecond) {
  const std::string row = "\"arrival_s\": 0.5, \"input_tokens\": 5, \"output_tokens\": 1}\n";
  // Hashed ids (no trailing number): the first line is read again to compare.
  std::string error = ErrorOf(
      "t.jsonl", "{\"id\": \"x\", " + row + "{\"id\": \"y\", " + row + "{\"id\": \"x\", " + row);
  EXPECT_NE(error.find("t.jsonl:3: id: duplicate request id 'x' (also used on line 1)"),
            std::string::npos)
      << error;
  // The default id is the line number: an explicit id may collide with it (counters).
  error = ErrorOf("t.jsonl", "{\"id\": \"2\", " + row + "{" + row);
  EXPECT_NE(error.find("t.jsonl:2: id: duplicate request id '2' (also used on line 1)"),
            std::string::npos)
      << error;
  const std::string bench =
      "\"input_toks\": 5, \"output_toks\": 2, \"first_token_ts\": 1, \"last_token_ts\": 2}\n";
  error = ErrorOf("r.jsonl", "{\"request_id\": \"a\", \"queued_ts\": 1.0, " + bench +
                                 "{\"request_id\": \"a\", \"queued_ts\": 2.0, " + bench);
  EXPECT_NE(error.find("r.jsonl:2: request_id: duplicate request id 'a' (also used on line 1)"),
            std::string::npos)
      << error;
  // vLLM-bench's own ids are counters (bench-0, bench-1, ...).
  error = ErrorOf("r.jsonl", "{\"request_id\": \"bench-0\", \"queued_ts\": 1.0, " + bench +
                                 "{\"request_id\": \"bench-1\", \"queued_ts\": 2.0, " + bench +
                                 "{\"request_id\": \"bench-0\", \"queued_ts\": 3.0, " + bench);
  EXPECT_NE(error.find("r.jsonl:3: request_id: duplicate request id 'bench-0' (also used on "
                       "line 1)"),
            std::string::npos)
      << error;
}

// The requests a native trace with this text yields.
int CountRequests(const std::string& text) {
  TempFile file("t.jsonl", text);
  auto source = OpenWorkload(file.path(), "native");
  int n = 0;
  while (source->Next())
    ++n;
  return n;
}

TEST(WorkloadSource, UniqueIdsOfEveryKindAreAccepted) {
  const std::string row = "\"arrival_s\": 0.5, \"input_tokens\": 5, \"output_tokens\": 1}\n";
  std::string trace;
  for (int i = 0; i < 3000; ++i) {
    // Counters in and out of order, default line numbers, and hashed ids.
    if (i % 3 == 0) trace += "{\"id\": \"r" + std::to_string(3000 - i) + "\", " + row;
    if (i % 3 == 1) trace += "{" + row;
    if (i % 3 == 2) trace += "{\"id\": \"u" + std::to_string(i) + "-x\", " + row;
  }
  EXPECT_EQ(CountRequests(trace), 3000);
}

TEST(WorkloadSource, ScatteredNumberIdsAreCheckedToo) {
  // Ids n0, n2, n4, ...: past 4,096 runs their counter is frozen and later ids are hashed;
  // a repeat of either kind is found.
  const std::string row = "\"arrival_s\": 0.5, \"input_tokens\": 5, \"output_tokens\": 1}\n";
  std::string trace;
  for (int i = 0; i < 6000; ++i)
    trace += "{\"id\": \"n" + std::to_string(2 * i) + "\", " + row;
  EXPECT_NE(ErrorOf("t.jsonl", trace + "{\"id\": \"n10\", " + row)
                .find("t.jsonl:6001: id: duplicate request id 'n10' (also used on line 6)"),
            std::string::npos);
  EXPECT_NE(ErrorOf("t.jsonl", trace + "{\"id\": \"n11000\", " + row)
                .find("t.jsonl:6001: id: duplicate request id 'n11000' (also used on line 5501)"),
            std::string::npos);
  EXPECT_EQ(CountRequests(trace + "{\"id\": \"n11001\", " + row + "{\"id\": \"n1\", " + row), 6002);
}

TEST(WorkloadSource, ALineSkippedAsBadUsesNoId) {
  const std::string row = "\"arrival_s\": 0.5, \"input_tokens\": 5, \"output_tokens\": 1}\n";
  TempFile file("t.jsonl",
                "{\"id\": \"x\", \"arrival_s\": 0.5, \"input_tokens\": -1, "
                "\"output_tokens\": 1}\n"
                "{\"id\": \"x\", " +
                    row + "{\"id\": \"x\", " + row + "{\"id\": \"y\", " + row);
  WindowOptions options;
  options.skip_bad_lines = true;
  WorkloadWindow window(OpenWorkload(file.path(), "native"), options);
  std::vector<std::string> ids;
  while (auto r = window.Next())
    ids.push_back(r->id);
  // Line 1 is bad (skipped), line 2 uses x, line 3 repeats it (skipped), line 4 uses y.
  EXPECT_EQ(ids, (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(window.skipped_lines(), 2);
}

TEST(WorkloadSource, ADuplicateIdThroughAPipeIsFoundByItsHash) {
  TempFile dir("unused", "");
  const std::string fifo = (dir.dir() / "trace.jsonl").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string row = "\"arrival_s\": 0.5, \"input_tokens\": 5, \"output_tokens\": 1}\n";
  std::thread writer(
      [&] { std::ofstream(fifo) << "{\"id\": \"x\", " + row + "{\"id\": \"x\", " + row; });
  const std::string error = CatchInputError([&] {
                              auto source = OpenWorkload(fifo, "native");
                              while (source->Next()) {
                              }
                            }).what();
  writer.join();
  EXPECT_NE(error.find("trace.jsonl:2: id: duplicate request id 'x' (also used on an earlier "
                       "line; a pipe cannot be read again, so by its 64-bit hash)"),
            std::string::npos)
      << error;
}

TEST(WorkloadSource, IdsLongerThanTheNameColumnAreRefused) {
  const std::string row = "\"arrival_s\": 0.5, \"input_tokens\": 5, \"output_tokens\": 1}\n";
  const std::string id48(48, 'a');
  TempFile ok("t.jsonl", "{\"id\": \"" + id48 + "\", " + row);
  auto source = OpenWorkload(ok.path(), "auto");
  EXPECT_EQ(source->Next()->id, id48);
  const std::string error = ErrorOf("t.jsonl", "{\"id\": \"" + id48 + "b\", " + row);
  EXPECT_NE(error.find("t.jsonl:1: id: is 49 bytes long, more than the 48 an id may have"),
            std::string::npos)
      << error;
}

TEST(WorkloadSource, ANativeLineMayNameItsModel) {
  TempFile file("t.jsonl",
                "{\"arrival_s\": 0, \"input_tokens\": 4, \"output_tokens\": 1, \"model\": "
                "\"llama-3.1-70b\"}\n"
                "{\"arrival_s\": 1, \"input_tokens\": 4, \"output_tokens\": 1}\n");
  auto source = OpenWorkload(file.path(), "auto");
  EXPECT_EQ(source->path(), file.path());
  const auto a = source->Next();
  ASSERT_TRUE(a);
  EXPECT_EQ(a->model, "llama-3.1-70b");
  EXPECT_EQ(a->line, 1);
  const auto b = source->Next();
  ASSERT_TRUE(b);
  EXPECT_EQ(b->model, "");  // any group may serve it
  EXPECT_EQ(b->line, 2);
}

TEST(WorkloadSource, ABadModelNameIsALocatedError) {
  const std::string row = "{\"arrival_s\": 1, \"input_tokens\": 4, \"output_tokens\": 1, ";
  for (const std::string& model :
       {std::string("\"\""), "\"" + std::string(65, 'x') + "\"", std::string("\"a\\u0001b\"")}) {
    SCOPED_TRACE(model);
    TempFile file("t.jsonl", row + "\"model\": \"ok\"}\n" + row + "\"model\": " + model + "}\n");
    auto source = OpenWorkload(file.path(), "native");
    ASSERT_TRUE(source->Next());
    const InputError e = CatchInputError([&] { source->Next(); });
    EXPECT_EQ(e.line(), 2);
    EXPECT_EQ(e.field(), "model");
  }
}

// Two requests for "served", one for "other", one naming none.
const char kModels[] =
    "{\"arrival_s\": 0, \"input_tokens\": 4, \"output_tokens\": 1, \"model\": \"served\"}\n"
    "{\"arrival_s\": 1, \"input_tokens\": 4, \"output_tokens\": 1, \"model\": \"other\"}\n"
    "{\"arrival_s\": 2, \"input_tokens\": 4, \"output_tokens\": 1}\n"
    "{\"arrival_s\": 3, \"input_tokens\": 4, \"output_tokens\": 1, \"model\": \"served\"}\n";

std::vector<std::string> ModelsThrough(WorkloadWindow& window) {
  std::vector<std::string> models;
  while (auto r = window.Next())
    models.push_back(r->model);
  return models;
}

TEST(WorkloadWindow, ADefaultModelGoesToRequestsThatNameNone) {
  TempFile file("t.jsonl", kModels);
  WindowOptions options;
  options.default_model = "served";
  WorkloadWindow window(OpenWorkload(file.path(), "native"), options);
  EXPECT_EQ(ModelsThrough(window),
            (std::vector<std::string>{"served", "other", "served", "served"}));
  options.default_model = std::string("bad\x01name");
  const InputError e =
      CatchInputError([&] { WorkloadWindow(OpenWorkload(file.path(), "native"), options); });
  EXPECT_EQ(e.field(), "--model") << e.what();
}

TEST(WorkloadWindow, StrictModelsRefuseAnUnservedModelAtItsLineOrSkipIt) {
  TempFile file("t.jsonl", kModels);
  WindowOptions options;
  options.known_models = std::vector<std::string>{"served"};
  WorkloadWindow strict(OpenWorkload(file.path(), "native"), options);
  ASSERT_TRUE(strict.Next());
  const InputError e = CatchInputError([&] { strict.Next(); });
  EXPECT_EQ(e.file(), file.path());
  EXPECT_EQ(e.line(), 2);
  EXPECT_EQ(e.field(), "model");
  EXPECT_TRUE(testing::Mentions(e, "no instance group serves 'other'")) << e.what();
  EXPECT_TRUE(testing::Mentions(e, "(--strict-models; served: served)")) << e.what();

  options.skip_bad_lines = true;
  WorkloadWindow skipping(OpenWorkload(file.path(), "native"), options);
  // The model-less request passes: any group may serve it.
  EXPECT_EQ(ModelsThrough(skipping), (std::vector<std::string>{"served", "", "served"}));
  EXPECT_EQ(skipping.skipped_lines(), 1);
}

}  // namespace
}  // namespace fleetsim
