// `fleetsim run` as a user runs it: every request once in /requests, exported as CSV;
// bad input refused in one line with nothing left behind; a hybrid with prefix caching
// whose /steps chunks and hits land on 784-token blocks.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "perf/synthetic_bundle.h"
#include "support/csv_rows.h"
#include "support/run_command.h"
#include "support/scratch_folder.h"
#include "support/shared_data.h"

namespace fleetsim {
namespace {

namespace fs = std::filesystem;
using testing::RunFleetsim;

// A scratch folder per test.
class RunCli : public testing::ScratchFolderTest {
 protected:
  // Rows of an exported table as column -> values.
  std::vector<testing::CsvRow> Csv(const std::string& name) const {
    return testing::ReadCsvRows(dir_ / name);
  }
  void ExpectNothingWritten(const std::string& h5) const {
    EXPECT_FALSE(fs::exists(Path(h5)));
    EXPECT_FALSE(fs::exists(Path(h5 + ".tmp")));
  }
};

std::string ProjectFile(const std::string& relative) {
  return (fs::path(FLEETSIM_SOURCE_DIR) / relative).string();
}

TEST_F(RunCli, EveryRequestAppearsOnceWithOneTerminalState) {
  FLEETSIM_REQUIRE_SHARED_DATA();
  const std::string trace = (testing::SharedDataDir() /
                             "traces/llmservingsim_vllm_bench/RTX4090/Llama-3.1-8B/requests.jsonl")
                                .string();
  const auto r = RunFleetsim(
      "run --cluster " + ProjectFile("cluster_configs/single_node_single_instance.yaml") +
      " --workload " + trace + " --output " + Path("run.h5") + " --trace-steps");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("fleet"), std::string::npos) << r.out;
  ASSERT_EQ(RunFleetsim("export --csv " + Path("run.h5")).exit_code, 0);
  const auto requests = Csv("run.requests.csv");
  ASSERT_EQ(requests.size(), 300u);
  for (std::size_t i = 0; i < requests.size(); ++i) {
    EXPECT_EQ(requests[i].at("id"), std::to_string(i));
    EXPECT_EQ(requests[i].at("state"), "finished");
  }
  EXPECT_EQ(Csv("run.summary.csv").back().at("group"), "fleet");
  EXPECT_EQ(Csv("run.instances.csv").size(), 1u);
  EXPECT_EQ(Csv("run.instances.csv")[0].at("steps"), std::to_string(Csv("run.steps.csv").size()));
}

TEST_F(RunCli, AHorizonEndsTheRestAsUnfinishedButKeepsThemAll) {
  FLEETSIM_REQUIRE_SHARED_DATA();
  const std::string trace = (testing::SharedDataDir() /
                             "traces/llmservingsim_vllm_bench/RTX4090/Llama-3.1-8B/requests.jsonl")
                                .string();
  const auto r = RunFleetsim("run --quiet --horizon 20 --cluster " +
                             ProjectFile("cluster_configs/single_node_single_instance.yaml") +
                             " --workload " + trace + " --output " + Path("h.h5"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out.empty());
  ASSERT_EQ(RunFleetsim("export --csv " + Path("h.h5")).exit_code, 0);
  const auto requests = Csv("h.requests.csv");
  ASSERT_EQ(requests.size(), 300u);
  std::map<std::string, int> states;
  for (const auto& row : requests)
    ++states[row.at("state")];
  EXPECT_GT(states["finished"], 0);
  EXPECT_GT(states["unfinished"], 0);
  EXPECT_EQ(states["finished"] + states["unfinished"], 300);
}

// A 27B hybrid on a synthetic bundle, prefix caching on: a 5,000-token prompt runs as
// 4,704 (ending on block 6) then 296; the same prompt later hits 4,704 and computes 296.
TEST_F(RunCli, HybridStepsAndHitsAlignTo784) {
  testing::SyntheticBundle bundle;
  testing::WriteHybridBundle(bundle, {1});
  Write("cluster.yaml",
        "name: hybrid\ninstance_groups:\n  - name: qwen27b\n    model: qwen3.8-27b\n"
        "    hardware: H200-SXM\n    bundle: " +
            bundle.dir() +
            "\n    tp: 1\n"
            "    engine: {enable_prefix_caching: true, max_num_batched_tokens: 8192,\n"
            "             max_model_len: 32768, num_gpu_blocks: 400}\n");
  std::string trace;
  for (int i = 0; i < 3; ++i) {
    trace +=
        "{\"id\": \"r" + std::to_string(i) + "\", \"arrival_s\": " + std::to_string(10 * i) +
        ", \"input_tokens\": 5000, \"output_tokens\": 4, \"block_hashes\": [1, 2, 3, 4, 5, 6], "
        "\"hash_block_size\": 784}\n";
  }
  Write("trace.jsonl", trace);
  const auto r =
      RunFleetsim("run --quiet --trace-steps --cluster " + Path("cluster.yaml") + " --workload " +
                  Path("trace.jsonl") + " --output " + Path("hybrid.h5"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(RunFleetsim("export --csv " + Path("hybrid.h5")).exit_code, 0);
  std::vector<std::string> prefills, hits;
  for (const auto& step : Csv("hybrid.steps.csv")) {
    if (step.at("prefill_tokens") != "0") prefills.push_back(step.at("prefill_tokens"));
    if (step.at("cache_hit_tokens") != "0") hits.push_back(step.at("cache_hit_tokens"));
  }
  EXPECT_EQ(prefills, (std::vector<std::string>{"4704", "296", "296", "296"}));
  EXPECT_EQ(hits, (std::vector<std::string>{"4704", "4704"}));
  const auto requests = Csv("hybrid.requests.csv");
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_EQ(requests[1].at("cached_tokens"), "4704");
  EXPECT_EQ(Csv("hybrid.instances.csv")[0].at("block_size"), "784");
}

// The shipped MTP example as the README runs it: only the speculating group drafts, at
// most k = 2 drafts per decoding request in a step, never more accepted than drafted, and
// every token a step emitted is one its requests produced.
TEST_F(RunCli, TheMtpExampleDraftsOnlyInItsSpeculatingGroup) {
  const auto r = RunFleetsim("run --quiet --trace-steps --cluster " +
                             ProjectFile("cluster_configs/hybrid27b_mtp.yaml") + " --workload " +
                             ProjectFile("runs/examples/shared_prefix_sessions.jsonl") +
                             " --output " + Path("mtp.h5"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(RunFleetsim("export --csv " + Path("mtp.h5")).exit_code, 0);
  std::map<std::string, std::string> group_of;
  for (const auto& instance : Csv("mtp.instances.csv"))
    group_of[instance.at("id")] = instance.at("group");
  std::map<std::string, int64_t> output_of_group, generated_of_group, drafts_of_group;
  int64_t accepted = 0;
  for (const auto& request : Csv("mtp.requests.csv")) {
    EXPECT_EQ(request.at("state"), "finished") << request.at("id");
    output_of_group[group_of.at(request.at("instance"))] += std::stoll(request.at("output_tokens"));
  }
  for (const auto& step : Csv("mtp.steps.csv")) {
    const std::string& group = group_of.at(step.at("instance"));
    const int64_t drafts = std::stoll(step.at("draft_tokens"));
    const int64_t accepted_here = std::stoll(step.at("accepted_tokens"));
    EXPECT_LE(drafts, 2 * std::stoll(step.at("decodes")));
    EXPECT_LE(accepted_here, drafts);
    generated_of_group[group] += std::stoll(step.at("generated_tokens"));
    drafts_of_group[group] += drafts;
    accepted += accepted_here;
  }
  EXPECT_EQ(drafts_of_group["qwen27b-h200"], 0);
  EXPECT_GT(drafts_of_group["qwen27b-h200-mtp"], 0);
  EXPECT_GT(accepted, 0);
  EXPECT_EQ(generated_of_group, output_of_group);
}

// A bundle measured on another GPU runs (a proxy can be deliberate), but the run says so,
// naming the group's line; the same bundle on its own GPU says nothing.
TEST_F(RunCli, ABundleForAnotherGpuIsRunWithAWarning) {
  testing::SyntheticBundle bundle;
  testing::WriteHybridBundle(bundle, {1});  // meta.yaml: qwen3.8-27b on H200-SXM
  Write("trace.jsonl",
        "{\"id\": \"r0\", \"arrival_s\": 0, \"input_tokens\": 100, "
        "\"output_tokens\": 4}\n");
  for (const char* gpu : {"RTX-PRO-6000", "H200-SXM"}) {
    SCOPED_TRACE(gpu);
    Write("cluster.yaml", std::string("instance_groups:\n  - name: g\n    model: qwen3.8-27b\n") +
                              "    hardware: " + gpu + "\n    bundle: " + bundle.dir() +
                              "\n    tp: 1\n    engine: {max_model_len: 32768}\n");
    const auto r = RunFleetsim("run --quiet --cluster " + Path("cluster.yaml") + " --workload " +
                               Path("trace.jsonl") + " --output " + Path("w.h5"));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const bool other = std::string(gpu) != "H200-SXM";
    EXPECT_EQ(
        r.err.find("cluster.yaml:5: instance_groups.g.bundle: the bundle " + bundle.dir() +
                   " was measured or built on 'H200-SXM', not RTX-PRO-6000") != std::string::npos,
        other)
        << r.err;
    EXPECT_EQ(r.err.find("warning") != std::string::npos, other) << r.err;
  }
}

TEST_F(RunCli, RoundRobinOverReplicas) {
  testing::SyntheticBundle bundle;
  testing::WriteHybridBundle(bundle, {1});
  Write("cluster.yaml",
        "instance_groups:\n  - name: g\n    model: qwen3.8-27b\n    hardware: H200-SXM\n"
        "    bundle: " +
            bundle.dir() +
            "\n    replicas: 2\n    engine: {num_gpu_blocks: 200}\n"
            "gateways: {count: 1, policy: round_robin}\n");
  Write("trace.jsonl",
        "{\"arrival_s\": 0, \"input_tokens\": 100, \"output_tokens\": 2}\n"
        "{\"arrival_s\": 0.5, \"input_tokens\": 100, \"output_tokens\": 2}\n"
        "{\"arrival_s\": 1, \"input_tokens\": 100, \"output_tokens\": 2}\n");
  ASSERT_EQ(RunFleetsim("run --quiet --cluster " + Path("cluster.yaml") + " --workload " +
                        Path("trace.jsonl") + " --output " + Path("rr.h5"))
                .exit_code,
            0);
  ASSERT_EQ(RunFleetsim("export --csv " + Path("rr.h5")).exit_code, 0);
  const auto requests = Csv("rr.requests.csv");
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_EQ(requests[0].at("instance"), "0");
  EXPECT_EQ(requests[1].at("instance"), "1");
  EXPECT_EQ(requests[2].at("instance"), "0");
  EXPECT_EQ(Csv("rr.instances.csv").size(), 2u);
}

// Two groups behind three gateways: every request once, routed by some gateway; the time
// series' generation throughput adds up to the tokens the instances produced.
TEST_F(RunCli, FleetTablesAddUp) {
  testing::SyntheticBundle bundle;
  testing::WriteHybridBundle(bundle, {1});
  std::string groups = "instance_groups:\n";
  for (const char* name : {"g1", "g2"}) {
    groups += std::string("  - name: ") + name +
              "\n    model: qwen3.8-27b\n    hardware: H200-SXM\n" + "    bundle: " + bundle.dir() +
              "\n    replicas: 2\n    engine: {num_gpu_blocks: 200}\n";
  }
  Write("cluster.yaml", groups +
                            "gateways: {count: 3, policy: least_outstanding}\n"
                            "timeseries: {interval_s: 0.25}\n");
  std::string trace;
  for (int i = 0; i < 40; ++i) {
    trace += "{\"arrival_s\": " + std::to_string(0.05 * i) +
             ", \"input_tokens\": " + std::to_string(100 + 37 * i) +
             ", \"output_tokens\": " + std::to_string(5 + i % 7) + "}\n";
  }
  Write("trace.jsonl", trace);
  const std::string run = "run --quiet --cluster " + Path("cluster.yaml") + " --workload " +
                          Path("trace.jsonl") + " --output ";
  ASSERT_EQ(RunFleetsim(run + Path("fleet.h5")).exit_code, 0);
  ASSERT_EQ(RunFleetsim("export --csv " + Path("fleet.h5")).exit_code, 0);
  const auto requests = Csv("fleet.requests.csv");
  ASSERT_EQ(requests.size(), 40u);
  std::set<std::string> gateways;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    EXPECT_EQ(requests[i].at("id"), std::to_string(i));
    EXPECT_EQ(requests[i].at("state"), "finished");
    gateways.insert(requests[i].at("gateway"));
  }
  EXPECT_EQ(gateways, (std::set<std::string>{"0", "1", "2"}));
  int64_t produced = 0;
  for (const auto& row : Csv("fleet.instances.csv"))
    produced += std::stoll(row.at("output_tokens"));
  double series = 0, fleet_series = 0;  // the groups' rows; the fleet's, their sum
  for (const auto& row : Csv("fleet.timeseries.csv")) {
    (row.at("group") == "fleet" ? fleet_series : series) +=
        std::stod(row.at("generation_tokens_per_s")) * 0.25;
  }
  EXPECT_NEAR(fleet_series, series, 1e-6);
  EXPECT_EQ(produced, 40 * 5 + (0 + 1 + 2 + 3 + 4 + 5 + 6) * 5 + (0 + 1 + 2 + 3 + 4));
  EXPECT_NEAR(series, static_cast<double>(produced), 1e-6);

  // --no-request-rows: the same summary, no /requests.
  ASSERT_EQ(RunFleetsim(run + Path("lean.h5") + " --no-request-rows").exit_code, 0);
  ASSERT_EQ(RunFleetsim("export --csv " + Path("lean.h5")).exit_code, 0);
  EXPECT_FALSE(fs::exists(Path("lean.requests.csv")));
  EXPECT_EQ(Csv("lean.summary.csv"), Csv("fleet.summary.csv"));

  // A horizon: still every request once; those arriving later never left their gateway.
  ASSERT_EQ(RunFleetsim(run + Path("cut.h5") + " --horizon 1.0").exit_code, 0);
  ASSERT_EQ(RunFleetsim("export --csv " + Path("cut.h5")).exit_code, 0);
  const auto cut = Csv("cut.requests.csv");
  ASSERT_EQ(cut.size(), 40u);
  for (const auto& row : cut) {
    const bool late = std::stod(row.at("arrival_ns")) >= 1e9;
    EXPECT_EQ(row.at("instance") == "-1", late) << row.at("id");
    if (late) {
      EXPECT_EQ(row.at("state"), "unfinished");
    }
  }
}

// Every real trace in ../shared/data/traces runs through `fleetsim run` by its name, on
// the default fleet (the first 1,500 requests of each, to keep the suite short).
TEST_F(RunCli, EveryRealTraceRunsByName) {
  FLEETSIM_REQUIRE_SHARED_DATA();
  const fs::path traces = testing::SharedDataDir() / "traces";
  int runs = 0;
  for (const auto& entry : fs::recursive_directory_iterator(traces)) {
    const fs::path& file = entry.path();
    if (!entry.is_regular_file() || file.filename() == "timeseries.csv") continue;
    if (file.extension() != ".csv" && file.extension() != ".jsonl") continue;
    fs::path name = fs::relative(file, traces);
    name.replace_extension();
    SCOPED_TRACE(name.generic_string());
    const std::string out = Path("trace" + std::to_string(runs) + ".h5");
    const auto result = RunFleetsim("run --quiet --workload " + name.generic_string() +
                                    " --num-reqs 1500 --no-request-rows --output " + out);
    if (file.stem().string().starts_with("arxiv_summarization")) {
      // Lengths only, no arrival times (data README): refused, saying how to use it.
      EXPECT_EQ(result.exit_code, 2);
      EXPECT_NE(result.err.find("no arrival times"), std::string::npos) << result.err;
      continue;
    }
    ASSERT_EQ(result.exit_code, 0) << result.err;
    ASSERT_EQ(RunFleetsim("export --csv " + out).exit_code, 0);
    const auto fleet = Csv("trace" + std::to_string(runs) + ".summary.csv").back();
    const int64_t requests = std::stoll(fleet.at("requests"));
    EXPECT_GT(requests, 0);
    EXPECT_LE(requests, 1500);
    EXPECT_EQ(requests, std::stoll(fleet.at("finished")) + std::stoll(fleet.at("rejected")) +
                            std::stoll(fleet.at("unfinished")));
    ++runs;
  }
  EXPECT_GE(runs, 9);
}

TEST_F(RunCli, BadInputIsOneLineExitTwoAndLeavesNoFile) {
  testing::SyntheticBundle bundle;
  testing::WriteHybridBundle(bundle, {1});
  const std::string group =
      "instance_groups:\n  - name: g\n    model: qwen3.8-27b\n    hardware: H200-SXM\n"
      "    bundle: " +
      bundle.dir() + "\n";
  Write("good.jsonl", "{\"arrival_s\": 0, \"input_tokens\": 100, \"output_tokens\": 2}\n");
  Write("bad.jsonl",
        "{\"arrival_s\": 0, \"input_tokens\": 100, \"output_tokens\": 2}\n"
        "{\"arrival_s\": 1, \"input_tokens\": \"many\", \"output_tokens\": 2}\n");
  Write("unknown_key.yaml", group + "    colour: blue\n");
  Write("tp_too_big.yaml", group + "    tp: 16\n");
  Write("good.yaml", group + "    engine: {num_gpu_blocks: 200}\n");
  Write("unknown_model.yaml",
        "instance_groups:\n  - name: g\n    model: llama-9\n    hardware: H200-SXM\n"
        "    bundle: " +
            bundle.dir() + "\n");
  struct Case {
    std::string cluster, workload, mention;
  };
  const Case cases[] = {
      {"unknown_key.yaml", "good.jsonl",
       "unknown_key.yaml:6: instance_groups[0].colour: unknown key"},
      {"tp_too_big.yaml", "good.jsonl", "tp_too_big.yaml:6: instance_groups[0].tp"},
      {"good.yaml", "bad.jsonl", "bad.jsonl:2: input_tokens: expected an integer"},
      // The config's line and field, not the command line's.
      {"unknown_model.yaml", "good.jsonl",
       "unknown_model.yaml:3: instance_groups.g.model: unknown model 'llama-9' (known: "},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.cluster + " " + c.workload);
    const auto r = RunFleetsim("run --cluster " + Path(c.cluster) + " --workload " +
                               Path(c.workload) + " --output " + Path("out.h5"));
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find(c.mention), std::string::npos) << r.err;
    ExpectNothingWritten("out.h5");
  }
  const auto missing_dir =
      RunFleetsim("run --cluster " + Path("good.yaml") + " --workload " + Path("good.jsonl") +
                  " --output " + Path("no/such/dir/out.h5"));
  EXPECT_EQ(missing_dir.exit_code, 2);
  EXPECT_NE(missing_dir.err.find("--output"), std::string::npos) << missing_dir.err;
}

// A group whose weights do not fit its GPUs, or whose attention pin cannot run, is one
// located line and exit 2: the key's line, the shortfall or the failed condition. The 27B
// in bf16 is 13.68B parameters per rank at TP 2 (13.45B text + 0.23B vision, as inspect
// counts them), 27.36e9 B = 25.48 GiB, against 21,458,059,264 B (19.98 GiB, the catalog's
// rocm-smi figure) x 0.90 = 17.99 GiB; the split-KV kernel admits only head size 256
// (vLLM PR 45916) and Qwen3-8B's is 128.
TEST_F(RunCli, WeightsThatDoNotFitAndImpossiblePinsNameTheGroup) {
  Write("one.jsonl", "{\"arrival_s\": 0, \"input_tokens\": 100, \"output_tokens\": 2}\n");
  Write("bf16.yaml",
        "instance_groups:\n  - name: big\n    model: qwen3.8-27b\n    hardware: RX-7900-XT\n"
        "    tp: 2\n");
  Write("pin.yaml",
        "instance_groups:\n  - name: dense\n    model: qwen3-8b\n    hardware: RX-7900-XT\n"
        "    tp: 2\n    engine:\n      decode_kernel: triton_paged_attention_2d_splitkv\n");
  struct Case {
    std::string cluster, mention;
  };
  for (const Case& c : {Case{"bf16.yaml",
                             "bf16.yaml:5: instance_groups.big.tp: the weights per rank (25.48 GiB "
                             "at TP 2) do not fit RX-7900-XT's 19.98 GiB x gpu_memory_utilization "
                             "0.90 = 17.99 GiB: 7.50 GiB short"},
                        Case{"pin.yaml",
                             "pin.yaml:7: instance_groups.dense.decode_kernel: "
                             "triton_paged_attention_2d_splitkv cannot run this model: head size "
                             "128 is not 256"}}) {
    SCOPED_TRACE(c.cluster);
    const auto r = RunFleetsim("run --cluster " + Path(c.cluster) + " --workload " +
                               Path("one.jsonl") + " --output " + Path("out.h5"));
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find(c.mention), std::string::npos) << r.err;
    ExpectNothingWritten("out.h5");
  }
}

// Issue 22: inputs that aborted, hung or exhausted memory now give one located line and
// exit 2 before the run grows; an unfinished request at the horizon is no overflow.
TEST_F(RunCli, ArrivalGapsAndTinyIntervalsThatWouldFloodTheTimeseriesAreRefused) {
  const std::string cluster = ProjectFile("cluster_configs/single_node_single_instance.yaml");
  const std::string row = "\"input_tokens\": 50, \"output_tokens\": 4}\n";
  Write("gap.jsonl", "{\"arrival_s\": 0.5, " + row + "{\"arrival_s\": 1e7, " + row);
  auto r = RunFleetsim("run --quiet --cluster " + cluster + " --workload " + Path("gap.jsonl") +
                       " --output " + Path("gap.h5"));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("timeseries.interval_s: the run reaches"), std::string::npos) << r.err;
  ExpectNothingWritten("gap.h5");

  std::ifstream in(cluster);
  std::stringstream text;
  text << in.rdbuf();
  // The bundle's relative path, made absolute for the copy in the scratch folder.
  std::string config = text.str();
  const std::string relative = "bundle: ../";
  config.replace(config.find(relative), relative.size(),
                 "bundle: " + ProjectFile("cluster_configs") + "/../");
  Write("tiny.yaml", config + "\ntimeseries: {interval_s: 1e-6}\n");
  Write("short.jsonl", "{\"arrival_s\": 0.5, " + row + "{\"arrival_s\": 2.5, " + row);
  r = RunFleetsim("run --quiet --cluster " + Path("tiny.yaml") + " --workload " +
                  Path("short.jsonl") + " --output " + Path("tiny.h5"));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("timeseries.interval_s:"), std::string::npos) << r.err;
}

TEST_F(RunCli, ATimeOverflowingTheClockIsALocatedError) {
  const std::string cluster = ProjectFile("cluster_configs/single_node_single_instance.yaml");
  const std::string bench =
      "\"input_toks\": 50, \"output_toks\": 4, \"first_token_ts\": 1, \"last_token_ts\": 2}\n";
  Write("bench.jsonl", "{\"request_id\": \"a\", \"queued_ts\": 1.0, " + bench +
                           "{\"request_id\": \"b\", \"queued_ts\": 1e18, " + bench);
  auto r = RunFleetsim("run --quiet --cluster " + cluster + " --workload " + Path("bench.jsonl") +
                       " --output " + Path("b.h5"));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("bench.jsonl:2: queued_ts:"), std::string::npos) << r.err;
  r = RunFleetsim("run --quiet --cluster " + cluster + " --workload " + Path("bench.jsonl") +
                  " --horizon 1e300 --output " + Path("b.h5"));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--horizon: must be at most 1e9 s"), std::string::npos) << r.err;
}

TEST_F(RunCli, UnfinishedRequestsAtTheHorizonOfAHybrid) {
  const auto r = RunFleetsim(
      "run --quiet --cluster " + ProjectFile("cluster_configs/single_node_hybrid_instance.yaml") +
      " --workload " + ProjectFile("runs/examples/shared_prefix_sessions.jsonl") +
      " --horizon 30 --output " + Path("h.h5"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
}

// Two served names on the synthetic Llama-3.1-8B bundle: "chat-a" on instances 0-1,
// "chat-b" on 2-4, behind one round-robin gateway.
class MultiModelCli : public RunCli {
 protected:
  void SetUp() override {
    RunCli::SetUp();
    testing::WriteDenseBundle(bundle_);
    const std::string group =
        "    model: llama-3.1-8b\n    hardware: H100-SXM\n    bundle: " + bundle_.dir() +
        "\n    engine: {num_gpu_blocks: 400}\n";
    Write("cluster.yaml", "instance_groups:\n  - name: ga\n    served_model_name: chat-a\n" +
                              group + "    replicas: 2\n  - name: gb\n" +
                              "    served_model_name: chat-b\n" + group +
                              "    replicas: 3\ngateways: {count: 1, policy: round_robin}\n");
    std::string trace;
    int i = 0;
    for (const char* model :
         {"chat-a", "chat-a", "chat-b", "", "chat-b", "chat-a", "", "gpt-x", "chat-b"}) {
      trace += "{\"arrival_s\": " + std::to_string(0.25 * i++) +
               ", \"input_tokens\": 100, \"output_tokens\": 3" +
               (*model ? std::string(", \"model\": \"") + model + "\"" : "") + "}\n";
    }
    Write("trace.jsonl", trace);
  }
  testing::CommandResult Run(const std::string& extra) {
    return RunFleetsim("run --quiet --cluster " + Path("cluster.yaml") + " --workload " +
                       Path("trace.jsonl") + " --output " + Path("mm.h5") + " " + extra);
  }
  // Runs with `extra`; each request's instance must be the one `expected` says.
  std::vector<std::map<std::string, std::string>> RunExpecting(
      const std::string& extra, const std::vector<std::string>& expected) {
    EXPECT_EQ(Run(extra).exit_code, 0);
    EXPECT_EQ(RunFleetsim("export --csv " + Path("mm.h5")).exit_code, 0);
    const auto requests = Csv("mm.requests.csv");
    EXPECT_EQ(requests.size(), expected.size());
    for (std::size_t i = 0; i < requests.size() && i < expected.size(); ++i)
      EXPECT_EQ(requests[i].at("instance"), expected[i]) << "request " << i;
    return requests;
  }
  testing::SyntheticBundle bundle_;
};

TEST_F(MultiModelCli, EachModelGoesToItsGroupsAndAnUnservedOneIsRejected) {
  // chat-a: round robin over 0-1; chat-b over 2-4; model-less over all five, in its own
  // turn; gpt-x: no group serves it (worked by hand in the trace's order).
  const auto requests = RunExpecting("", {"0", "1", "2", "0", "3", "0", "1", "-1", "4"});
  for (std::size_t i = 0; i < requests.size(); ++i) {
    EXPECT_EQ(requests[i].at("state"), i == 7 ? "rejected" : "finished") << i;
    EXPECT_EQ(requests[i].at("reason"), i == 7 ? "no_model" : "") << i;
  }
  const auto summary = Csv("mm.summary.csv");
  ASSERT_EQ(summary.size(), 5u);
  const std::vector<std::pair<std::string, std::string>> rows = {
      {"ga", "5"}, {"gb", "3"}, {"model:chat-a", "5"}, {"model:chat-b", "3"}, {"fleet", "9"}};
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(summary[i].at("group"), rows[i].first);
    EXPECT_EQ(summary[i].at("requests"), rows[i].second) << rows[i].first;
  }
  EXPECT_EQ(summary[4].at("rejected"), "1");
}

TEST_F(MultiModelCli, ADefaultModelTakesTheRequestsThatNameNone) {
  // The model-less requests 3 and 6 now take chat-b's turns: 2, 3, 4, 2, 3.
  RunExpecting("--model chat-b", {"0", "1", "2", "3", "4", "0", "2", "-1", "3"});
}

TEST_F(MultiModelCli, ModelErrorsAreOneLocatedLine) {
  auto r = Run("--model gpt-x");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "fleetsim: error: command line: --model: no instance group serves 'gpt-x' (served: "
            "chat-a, chat-b)\n");
  ExpectNothingWritten("mm.h5");
  r = Run("--strict-models");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "fleetsim: error: " + Path("trace.jsonl") +
                       ":8: model: no instance group serves 'gpt-x' (--strict-models; served: "
                       "chat-a, chat-b)\n");
  ExpectNothingWritten("mm.h5");
  // Skipped and counted instead: eight rows.
  ASSERT_EQ(Run("--strict-models --skip-bad-lines").exit_code, 0);
  ASSERT_EQ(RunFleetsim("export --csv " + Path("mm.h5")).exit_code, 0);
  EXPECT_EQ(Csv("mm.requests.csv").size(), 8u);
  // A model name that cannot be one, in the trace.
  Write("trace.jsonl",
        "{\"arrival_s\": 0, \"input_tokens\": 100, \"output_tokens\": 3}\n"
        "{\"arrival_s\": 1, \"input_tokens\": 100, \"output_tokens\": 3, "
        "\"model\": \"\"}\n");
  r = Run("");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "fleetsim: error: " + Path("trace.jsonl") + ":2: model: must not be empty\n");
}

// Prefill/decode disaggregation on the synthetic Llama-3.1-8B bundle: two TP 1 prefill
// instances (ids 0-1) and two decode instances (2-3), each group on an implicit H100 pool
// of its own, so every KV transfer crosses the network (docs/DISAGGREGATION.md).
class PrefillDecodeCli : public RunCli {
 protected:
  void SetUp() override {
    RunCli::SetUp();
    testing::WriteDenseBundle(bundle_);
    group_ = "    model: llama-3.1-8b\n    hardware: H100-SXM\n    bundle: " + bundle_.dir() +
             "\n    engine: {num_gpu_blocks: 400}\n    replicas: 2\n";
    std::string trace;
    for (int i = 0; i < 12; ++i) {
      trace += "{\"id\": \"r" + std::to_string(i) +
               "\", \"arrival_s\": " + std::to_string(0.05 * i) +
               ", \"input_tokens\": 100, \"output_tokens\": " + std::to_string(3 + i % 4) + "}\n";
    }
    Write("trace.jsonl", trace);
  }
  testing::CommandResult Run(const std::string& cluster) {
    Write("cluster.yaml", cluster);
    return RunFleetsim("run --quiet --cluster " + Path("cluster.yaml") + " --workload " +
                       Path("trace.jsonl") + " --output " + Path("pd.h5"));
  }
  testing::SyntheticBundle bundle_;
  std::string group_;
};

TEST_F(PrefillDecodeCli, EveryRequestGoesFromAPrefillToADecodeInstanceInTimeOrder) {
  const auto r = Run("instance_groups:\n  - name: p\n    role: prefill\n" + group_ +
                     "  - name: d\n    role: decode\n" + group_ +
                     "gateways: {count: 1, policy: round_robin, decode_policy: round_robin}\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(RunFleetsim("export --csv " + Path("pd.h5")).exit_code, 0);
  const auto requests = Csv("pd.requests.csv");
  ASSERT_EQ(requests.size(), 12u);
  // Default latencies: 500 us gateway -> instance and instance -> client.
  constexpr int64_t kHop = 500'000;
  // 100 tokens fill 7 blocks of 16: 112 tokens x 131,072 B (32 layers x 8 KV heads x 128 x
  // K, V x 2 B); over one 50 GB/s NIC pair: 293,601.28 ns, rounded up, + NCCL's 9.6 us.
  constexpr int64_t kBytes = 112 * 131'072;
  constexpr int64_t kTransfer = 293'602 + 9'600;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const auto& row = requests[i];
    SCOPED_TRACE("request " + std::to_string(i));
    EXPECT_EQ(row.at("id"), std::to_string(i));
    EXPECT_EQ(row.at("name"), "r" + std::to_string(i));  // the trace's id, through the hand-off
    EXPECT_EQ(row.at("state"), "finished");
    EXPECT_EQ(row.at("prefill_instance"), std::to_string(i % 2));
    EXPECT_EQ(row.at("decode_instance"), std::to_string(2 + i % 2));
    EXPECT_EQ(row.at("instance"), row.at("decode_instance"));
    EXPECT_EQ(row.at("output_tokens"), std::to_string(3 + i % 4));
    EXPECT_EQ(std::stoll(row.at("transfer_bytes")), kBytes);
    const int64_t arrival = std::stoll(row.at("arrival_ns"));
    const int64_t start = std::stoll(row.at("transfer_start_ns"));
    const int64_t end = std::stoll(row.at("transfer_end_ns"));
    const int64_t first_token = std::stoll(row.at("first_token_ns"));  // at the client
    EXPECT_EQ(end - start, kTransfer);
    // The prefill instance's first token goes to the gateway and on to the decode instance.
    const int64_t prefill_token = start - 2 * kHop;
    EXPECT_GT(prefill_token, arrival + kHop);
    EXPECT_LE(end, first_token - kHop);
    EXPECT_LE(first_token, std::stoll(row.at("finish_ns")));
  }
  const auto instances = Csv("pd.instances.csv");
  ASSERT_EQ(instances.size(), 4u);
  EXPECT_EQ(instances[0].at("role"), "prefill");
  EXPECT_EQ(instances[3].at("role"), "decode");
  // /summary: the prefill group's row counts the 12 requests it prefilled, the decode
  // group's the 12 it finished, the fleet's each once.
  const auto summary = Csv("pd.summary.csv");
  ASSERT_EQ(summary.size(), 3u);
  for (const char* group : {"p", "d", "fleet"}) {
    const auto row = std::find_if(summary.begin(), summary.end(),
                                  [&](const auto& s) { return s.at("group") == group; });
    ASSERT_NE(row, summary.end()) << group;
    EXPECT_EQ(row->at("requests"), "12") << group;
    EXPECT_EQ(row->at("finished"), "12") << group;
    EXPECT_EQ(row->at("ttft_p99_s"), summary[2].at("ttft_p99_s")) << group;
  }
}

TEST_F(PrefillDecodeCli, DecodeScopeNodeKeepsEveryTransferOnItsNodesNvlink) {
  // Two nodes of 2 GPUs. Spread placement puts a prefill and a decode instance on each
  // (P 0 and D 2 on node 0, P 1 and D 3 on node 1); decode_scope: node pairs them.
  const std::string fleet =
      "instance_groups:\n  - name: p\n    role: prefill\n    pool: h\n" + group_ +
      "  - name: d\n    role: decode\n    pool: h\n" + group_ +
      "gateways: {count: 1, policy: round_robin, decode_policy: least_kv, decode_scope: node}\n";
  const std::string spread =
      "node_pools: [{name: h, hardware: H100-SXM, nodes: 2, gpus_per_node: 2, placement: "
      "spread}]\n";
  const auto r = Run(spread + fleet);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(RunFleetsim("export --csv " + Path("pd.h5")).exit_code, 0);
  const auto requests = Csv("pd.requests.csv");
  ASSERT_EQ(requests.size(), 12u);
  // 112 tokens x 131,072 B over one NVLink pair of an H100 (18 links x NCCL's 20.6 GB/s):
  // 39,590.24 ns, rounded up, + NCCL's 3.4 us.
  constexpr int64_t kNvlinkTransfer = 39'591 + 3'400;
  for (const auto& row : requests) {
    SCOPED_TRACE("request " + row.at("id"));
    EXPECT_EQ(std::stoi(row.at("decode_instance")), std::stoi(row.at("prefill_instance")) + 2);
    EXPECT_EQ(std::stoll(row.at("transfer_end_ns")) - std::stoll(row.at("transfer_start_ns")),
              kNvlinkTransfer);
  }
  // First fit puts both prefill instances on node 0 and both decode instances on node 1:
  // under decode_scope: node that is one located line.
  const auto packed =
      Run("node_pools: [{name: h, hardware: H100-SXM, nodes: 2, gpus_per_node: 2}]\n" + fleet);
  EXPECT_EQ(packed.exit_code, 2);
  EXPECT_NE(packed.err.find("cluster.yaml:4: instance_groups.p.role: gateways.decode_scope is "
                            "node, but instance 0 (prefill, replica 0) on node 0 of pool 'h' has "
                            "no decode instance of its model on that node"),
            std::string::npos)
      << packed.err;
}

TEST_F(PrefillDecodeCli, AFleetWithoutItsOtherHalfIsOneLocatedLine) {
  auto r = Run("instance_groups:\n  - name: p\n    role: prefill\n" + group_);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "fleetsim: error: " + Path("cluster.yaml") +
                       ":3: instance_groups.p.role: prefill needs a decode group serving "
                       "'llama-3.1-8b', and no group is one (a prefill group hands every request "
                       "to one)\n");
  ExpectNothingWritten("pd.h5");
  r = Run("instance_groups:\n  - name: m\n" + group_ + "  - name: d\n    role: decode\n" + group_);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("cluster.yaml:9: instance_groups.d.role: decode needs a prefill group"),
            std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace fleetsim
