// `fleetsim validate vllm-bench` on the real vLLM runs in ../shared/data, with their
// matching measured bundles: the fidelity targets of the engine issue, as a user runs it.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <iterator>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "support/catalog_entry.h"
#include "support/run_command.h"
#include "support/shared_data.h"
#include "support/temp_file.h"

namespace fleetsim {
namespace {

using testing::RunFleetsim;

struct Case {
  const char* run;
  const char* bundle;
  const char* extra;
};

// Issue 17's target for a cell: at or below LLMServingSim's published error on the same run
// (its bench/examples/<GPU>/<model>/validation/summary.txt), or within 1.5 % where that is
// below 1.5 %.
struct Published {
  const char* metric;
  const char* stat;
  double llmservingsim;
};

void ExpectAtOrBelowLlmServingSim(const YAML::Node& doc, std::initializer_list<Published> cells) {
  for (const Published& cell : cells) {
    EXPECT_LE(std::abs(doc[cell.metric][cell.stat]["error"].as<double>()),
              std::max(std::abs(cell.llmservingsim), 0.015))
        << cell.metric << " " << cell.stat;
  }
}

// A cell on one of fleetsim's analytic bundles: `measured` is its error in
// docs/VALIDATION.md. Issue 17's analytic target (TPOT and E2E within 8 %, TTFT within
// 15 %) where that error meets it; a REGRESSION BOUND (within 1.5 points) where it misses.
struct AnalyticCell {
  const char* metric;
  const char* stat;
  double measured;
};

void ExpectAnalyticTargetOrBound(const YAML::Node& doc, const std::vector<AnalyticCell>& cells) {
  for (const AnalyticCell& cell : cells) {
    const double error = doc[cell.metric][cell.stat]["error"].as<double>();
    const double target = std::string(cell.metric) == "ttft" ? 0.15 : 0.08;
    if (std::abs(cell.measured) <= target) {
      EXPECT_LE(std::abs(error), target) << cell.metric << " " << cell.stat;
    } else {
      EXPECT_NEAR(error, cell.measured, 0.015) << cell.metric << " " << cell.stat;
    }
  }
}

void CheckTargets(const Case& c, std::initializer_list<Published> met) {
  const auto data = testing::SharedDataDir();
  const std::string args = std::string("validate vllm-bench ") +
                           (data / "traces/llmservingsim_vllm_bench" / c.run).string() +
                           " --bundle " +
                           (data / "profiles/llmservingsim/perf" / c.bundle).string() +
                           " --model llama-3.1-8b --json " + c.extra;
  const auto r = RunFleetsim(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const YAML::Node doc = YAML::Load(r.out);
  EXPECT_EQ(doc["requests"].as<int>(), 300);
  for (const char* metric : {"tpot", "e2e"}) {
    for (const char* stat : {"mean", "median"}) {
      EXPECT_LE(std::abs(doc[metric][stat]["error"].as<double>()), 0.05) << metric << " " << stat;
    }
  }
  for (const char* stat : {"mean", "median"}) {
    EXPECT_LE(std::abs(doc["ttft"][stat]["error"].as<double>()), 0.15) << "ttft " << stat;
  }
  EXPECT_GT(doc["series"]["points"].as<int>(), 0);
  ExpectAtOrBelowLlmServingSim(doc, met);
}

TEST(ValidateCli, Rtx4090Llama8BMeetsTheTargets) {
  FLEETSIM_REQUIRE_SHARED_DATA();
  // Issue 17's cells this run meets; mean TTFT (+1.57 %) and median E2E (+4.2 %: the
  // median falls in a 2.8 s gap of the run's E2E distribution, docs/VALIDATION.md) do not.
  CheckTargets({"RTX4090/Llama-3.1-8B", "RTX4090/meta-llama/Llama-3.1-8B/bf16", ""},
               {{"ttft", "median", 0.008},
                {"tpot", "mean", 0.002},
                {"tpot", "median", 0.002},
                {"e2e", "mean", 0.005}});
}

TEST(ValidateCli, RtxPro6000Llama8BMeetsTheTargets) {
  FLEETSIM_REQUIRE_SHARED_DATA();
  // Its meta.json has no KV capacity: 0.9 of the GPU's memory minus the weights.
  // Every cell of issue 17's target.
  CheckTargets({"RTXPRO6000/Llama-3.1-8B", "RTXPRO6000/meta-llama/Llama-3.1-8B/bf16",
                "--hardware RTX-PRO-6000"},
               {{"ttft", "mean", -0.040},
                {"ttft", "median", -0.086},
                {"tpot", "mean", -0.010},
                {"tpot", "median", -0.000},
                {"e2e", "mean", -0.018},
                {"e2e", "median", -0.012}});
}

// The DP 2 expert-parallel run meets issue 17's median TTFT target (LLMServingSim's -21.8 %)
// and misses its mean TTFT (-13.6 %), TPOT and E2E (-1.7 / -1.6, -2.2 / -2.0 %): those are
// REGRESSION BOUNDS, the errors measured on 2026-12-06 (docs/VALIDATION.md) within 1.5
// points, not targets.
// The DP 2 expert-parallel run's replay on its measured bundle, less --hardware.
std::string Qwen30BDataParallelReplay() {
  const auto data = testing::SharedDataDir();
  return "validate vllm-bench " +
         (data / "traces/llmservingsim_vllm_bench/RTXPRO6000/Qwen3-30B-A3B-Instruct-2507")
             .string() +
         " --bundle " +
         (data / "profiles/llmservingsim/perf/RTXPRO6000/Qwen/Qwen3-30B-A3B-Instruct-2507/bf16")
             .string() +
         " --model qwen3-30b-a3b";
}

TEST(ValidateCli, RtxPro6000Qwen30BDataParallelExpertParallelReplays) {
  FLEETSIM_REQUIRE_SHARED_DATA();
  const std::string replay = Qwen30BDataParallelReplay() + " --hardware RTX-PRO-6000";
  const auto r = RunFleetsim(replay + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const YAML::Node doc = YAML::Load(r.out);
  EXPECT_EQ(doc["requests"].as<int>(), 300);
  const struct {
    const char* metric;
    const char* stat;
    double measured;
  } bounds[] = {{"ttft", "mean", -0.155},
                {"tpot", "mean", -0.024},
                {"tpot", "median", -0.030},
                {"e2e", "mean", -0.028},
                {"e2e", "median", -0.023}};
  for (const auto& b : bounds) {
    EXPECT_NEAR(doc[b.metric][b.stat]["error"].as<double>(), b.measured, 0.015)
        << b.metric << " " << b.stat;
  }
  ExpectAtOrBelowLlmServingSim(doc, {{"ttft", "median", -0.218}});
  // The per-second series sums both ranks, as the run's does.
  EXPECT_LT(doc["series"]["running_mae"].as<double>(),
            0.15 * doc["series"]["running_measured_mean"].as<double>());

  // The summary counts the lock-steps whose ranks ran unequal counts: some, not all (a
  // prefill chunk past the 256-token capture size on one rank), each exchange dearer than
  // the average lock-step's.
  const auto text = RunFleetsim(replay);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  long long steps = 0, rooted = 0;
  double average_ms = 0, rooted_ms = 0;
  const std::size_t dp_line = text.out.find("data parallel: 2 ranks, ");
  const std::size_t unequal_line = text.out.find("unequal token counts (a rank eager): ");
  ASSERT_NE(dp_line, std::string::npos) << text.out;
  ASSERT_NE(unequal_line, std::string::npos) << text.out;
  ASSERT_EQ(
      std::sscanf(text.out.c_str() + dp_line, "data parallel: 2 ranks, %lld lock-steps", &steps),
      1);
  ASSERT_EQ(std::sscanf(text.out.c_str() + text.out.find("dispatch + combine ", dp_line),
                        "dispatch + combine %lf ms", &average_ms),
            1);
  ASSERT_EQ(std::sscanf(text.out.c_str() + unequal_line,
                        "unequal token counts (a rank eager): %lld lock-steps, their dispatch + "
                        "combine rooted broadcasts and reduces, %lf ms each",
                        &rooted, &rooted_ms),
            2);
  EXPECT_GT(rooted, 0);
  EXPECT_LT(rooted, steps);
  EXPECT_GT(rooted_ms, average_ms);
}

// The replay says which layout it priced its collectives on: the catalog's RTX PRO 6000
// server (two GPUs under one PCIe switch: NCCL goes peer to peer), or the copy passed as
// --hardware. A copy with each GPU on its own root port (an Intel host: NCCL stages through
// host memory) moves the errors as docs/VALIDATION.md records (2026-12-06: TTFT -7.3 / -2.5,
// TPOT -0.6 / -0.9, E2E -0.9 / -0.5 %, within 1.5 points).
TEST(ValidateCli, DataParallelReplayNamesItsNodeLayoutAndTakesAnother) {
  FLEETSIM_REQUIRE_SHARED_DATA();
  const std::string replay = Qwen30BDataParallelReplay();
  const auto catalog = RunFleetsim(replay + " --hardware RTX-PRO-6000");
  ASSERT_EQ(catalog.exit_code, 0) << catalog.err;
  EXPECT_NE(catalog.out.find("collectives: 2 GPUs of one RTX-PRO-6000 node (8-GPU node, pcie: "
                             "PCIe Gen5 x16, 2 GPU(s) per PCIe switch"),
            std::string::npos)
      << catalog.out;
  EXPECT_NE(catalog.out.find("NCCL goes PCIe peer to peer through a shared PCIe switch"),
            std::string::npos)
      << catalog.out;

  const testing::TempFile copy("RTX-PRO-6000.yaml",
                               testing::CatalogEntryWith("RTX-PRO-6000", "gpus_per_pcie_switch: 2",
                                                         "gpus_per_pcie_switch: 1"));
  const auto own_ports = RunFleetsim(replay + " --hardware " + copy.path() + " --json");
  ASSERT_EQ(own_ports.exit_code, 0) << own_ports.err;
  const YAML::Node doc = YAML::Load(own_ports.out);
  EXPECT_EQ(doc["collectives"]["gpus"].as<int>(), 2);
  EXPECT_EQ(doc["collectives"]["transport"].as<std::string>(),
            "host memory (SHM) on at least one ring hop");
  const struct {
    const char* metric;
    const char* stat;
    double measured;
  } moved[] = {{"ttft", "mean", -0.073},   {"ttft", "median", -0.025}, {"tpot", "mean", -0.006},
               {"tpot", "median", -0.009}, {"e2e", "mean", -0.009},    {"e2e", "median", -0.005}};
  for (const auto& m : moved) {
    EXPECT_NEAR(doc[m.metric][m.stat]["error"].as<double>(), m.measured, 0.015)
        << m.metric << " " << m.stat;
  }
}

// The same run on fleetsim's analytic bundle (analytic-15): issue 17's 8 % / 15 % targets
// where it meets them (all but mean TTFT), a REGRESSION BOUND where it misses, measured
// 2026-12-06 (docs/VALIDATION.md, within 1.5 points).
TEST(ValidateCli, RtxPro6000Qwen30BDataParallelOnTheAnalyticBundle) {
  FLEETSIM_REQUIRE_SHARED_DATA();
  const auto data = testing::SharedDataDir();
  const std::filesystem::path bundle = std::filesystem::temp_directory_path() /
                                       ("fleetsim-dp-analytic-" + std::to_string(::getpid()));
  std::filesystem::remove_all(bundle);
  const auto built = RunFleetsim(
      "bundle build --source analytic --model qwen3-30b-a3b --hardware RTX-PRO-6000 --tp 1 "
      "--out " +
      bundle.string());
  ASSERT_EQ(built.exit_code, 0) << built.err;
  const auto r = RunFleetsim(
      "validate vllm-bench " +
      (data / "traces/llmservingsim_vllm_bench/RTXPRO6000/Qwen3-30B-A3B-Instruct-2507").string() +
      " --bundle " + bundle.string() + " --model qwen3-30b-a3b --hardware RTX-PRO-6000 --json");
  std::filesystem::remove_all(bundle);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ExpectAnalyticTargetOrBound(YAML::Load(r.out), {{"ttft", "mean", -0.218},
                                                  {"ttft", "median", -0.071},
                                                  {"tpot", "mean", -0.055},
                                                  {"tpot", "median", -0.061},
                                                  {"e2e", "mean", -0.060},
                                                  {"e2e", "median", -0.060}});
}

// A copy of a real run's directory in a temp folder, its meta.json edited by `edit` (which
// says whether it found what it edits), for a test that changes one setting.
std::filesystem::path CopyRunWithMeta(const std::filesystem::path& real, const std::string& tag,
                                      const std::function<bool(std::string&)>& edit) {
  const std::filesystem::path run = std::filesystem::temp_directory_path() /
                                    ("fleetsim-" + tag + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(run);
  std::filesystem::create_directories(run);
  for (const char* file : {"requests.jsonl", "timeseries.csv"})
    std::filesystem::copy_file(real / file, run / file);
  std::ifstream in(real / "meta.json");
  std::string meta((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_TRUE(edit(meta)) << "the edit found nothing to change in " << real / "meta.json";
  std::ofstream(run / "meta.json") << meta;
  return run;
}

TEST(ValidateCli, DataParallelWithoutExpertParallelismIsRefusedAtItsSetting) {
  FLEETSIM_REQUIRE_SHARED_DATA();
  const auto data = testing::SharedDataDir();
  const std::filesystem::path real =
      data / "traces/llmservingsim_vllm_bench/RTXPRO6000/Qwen3-30B-A3B-Instruct-2507";
  const std::filesystem::path run = CopyRunWithMeta(real, "validate-dp", [](std::string& meta) {
    const std::string on = "\"enable_expert_parallel\": true";
    const std::size_t at = meta.find(on);
    if (at == std::string::npos) return false;
    meta.replace(at, on.size(), "\"enable_expert_parallel\": false");
    return true;
  });
  const std::string bundle =
      (data / "profiles/llmservingsim/perf/RTXPRO6000/Qwen/Qwen3-30B-A3B-Instruct-2507/bf16")
          .string();
  const auto r = RunFleetsim("validate vllm-bench " + run.string() + " --bundle " + bundle +
                             " --model qwen3-30b-a3b --hardware RTX-PRO-6000");
  // A dense model under DP x EP is refused too (the real run's meta, Llama's card).
  const auto dense = RunFleetsim("validate vllm-bench " + real.string() + " --bundle " + bundle +
                                 " --model llama-3.1-8b --hardware RTX-PRO-6000");
  std::filesystem::remove_all(run);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("meta.json"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("enable_expert_parallel"), std::string::npos) << r.err;
  EXPECT_EQ(dense.exit_code, 2);
  EXPECT_NE(dense.err.find("no MoE layers"), std::string::npos) << dense.err;
}

TEST(ValidateCli, MissingKvCapacityAsksForHardware) {
  FLEETSIM_REQUIRE_SHARED_DATA();
  const auto data = testing::SharedDataDir();
  const auto r = RunFleetsim(
      "validate vllm-bench " +
      (data / "traces/llmservingsim_vllm_bench/RTXPRO6000/Llama-3.1-8B").string() + " --bundle " +
      (data / "profiles/llmservingsim/perf/RTXPRO6000/meta-llama/Llama-3.1-8B/bf16").string() +
      " --model llama-3.1-8b");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--hardware"), std::string::npos) << r.err;
}

// Issue 22: a queued_ts far past the first is refused at its line, not rebased into a
// clock overflow.
TEST(ValidateCli, AQueuedTsPastTheLargestSimulatedTimeIsALocatedError) {
  FLEETSIM_REQUIRE_SHARED_DATA();
  const auto data = testing::SharedDataDir();
  const std::filesystem::path real = data / "traces/llmservingsim_vllm_bench/RTX4090/Llama-3.1-8B";
  const std::filesystem::path run =
      std::filesystem::temp_directory_path() / ("fleetsim-validate-" + std::to_string(::getpid()));
  std::filesystem::remove_all(run);
  std::filesystem::create_directories(run);
  for (const char* file : {"meta.json", "timeseries.csv"})
    std::filesystem::copy_file(real / file, run / file);
  // The real run's first two requests, the second one queued 1e18 s later.
  std::ifstream in(real / "requests.jsonl");
  std::string first, second;
  ASSERT_TRUE(std::getline(in, first) && std::getline(in, second));
  const std::size_t at = second.find("\"queued_ts\": ");
  ASSERT_NE(at, std::string::npos);
  const std::size_t end = second.find(',', at);
  second = second.substr(0, at) + "\"queued_ts\": 1e18" + second.substr(end);
  std::ofstream(run / "requests.jsonl") << first << "\n" << second << "\n";
  const auto r = RunFleetsim(
      "validate vllm-bench " + run.string() + " --bundle " +
      (data / "profiles/llmservingsim/perf/RTX4090/meta-llama/Llama-3.1-8B/bf16").string() +
      " --model llama-3.1-8b");
  std::filesystem::remove_all(run);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("requests.jsonl:2: queued_ts: is 1e+18 s"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("must be at most 1e9 s"), std::string::npos) << r.err;
}

// A CSV file's lines split at commas, the header first.
std::vector<std::vector<std::string>> CsvRows(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::vector<std::vector<std::string>> rows;
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> cells;
    std::stringstream fields(line);
    for (std::string cell; std::getline(fields, cell, ',');)
      cells.push_back(cell);
    if (!line.empty() && line.back() == ',') cells.emplace_back();  // an empty last cell
    rows.push_back(cells);
  }
  return rows;
}

const char* const kPro6000LlamaRun = "traces/llmservingsim_vllm_bench/RTXPRO6000/Llama-3.1-8B";

// `validate vllm-bench` of the RTX PRO 6000 Llama run on its measured bundle, --json.
std::string Pro6000LlamaValidate() {
  const auto data = testing::SharedDataDir();
  return "validate vllm-bench " + (data / kPro6000LlamaRun).string() + " --bundle " +
         (data / "profiles/llmservingsim/perf/RTXPRO6000/meta-llama/Llama-3.1-8B/bf16").string() +
         " --model llama-3.1-8b --hardware RTX-PRO-6000 --json";
}

// The PRO 6000 Llama run's summary (--json) and the rows it writes with `option` (a CSV
// option) into a temporary file, removed again.
struct SummaryAndCsv {
  YAML::Node summary;
  std::vector<std::vector<std::string>> rows;
};
SummaryAndCsv Pro6000LlamaWriting(const std::string& option) {
  const std::filesystem::path csv = std::filesystem::temp_directory_path() /
                                    ("fleetsim" + option + "-" + std::to_string(::getpid()));
  const auto r = RunFleetsim(Pro6000LlamaValidate() + " " + option + " " + csv.string());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  SummaryAndCsv out{r.exit_code == 0 ? YAML::Load(r.out) : YAML::Node(), CsvRows(csv)};
  std::filesystem::remove(csv);
  return out;
}

// --requests-csv writes one row per request, in the run's order, whose columns give the
// summary's figures; an unwritable path is refused naming the option.
TEST(ValidateCli, RequestsCsvHasEveryRequestAndAgreesWithTheSummary) {
  FLEETSIM_REQUIRE_SHARED_DATA();
  const std::string args = Pro6000LlamaValidate();
  const auto [doc, written] = Pro6000LlamaWriting("--requests-csv");
  ASSERT_FALSE(written.empty());
  EXPECT_EQ(written[0], (std::vector<std::string>{
                            "request", "arrival_s", "input_tokens", "output_tokens", "dp_rank",
                            "ttft_sim_s", "ttft_measured_s", "tpot_sim_s", "tpot_measured_s",
                            "e2e_sim_s", "e2e_measured_s", "preemptions_sim"}));
  int rows = 0;
  double ttft_sim = 0, e2e_measured = 0;
  for (std::size_t i = 1; i < written.size(); ++i) {
    const std::vector<std::string>& cells = written[i];
    ASSERT_EQ(cells.size(), 12u) << i;
    EXPECT_EQ(cells[11], "0");                             // this run never fills its pool
    EXPECT_EQ(cells[0], "bench-" + std::to_string(rows));  // the run's order
    ttft_sim += std::stod(cells[5]);
    e2e_measured += std::stod(cells[10]);
    ++rows;
  }
  EXPECT_EQ(rows, 300);
  EXPECT_NEAR(ttft_sim / rows, doc["ttft"]["mean"]["simulated_s"].as<double>(), 1e-5);
  EXPECT_NEAR(e2e_measured / rows, doc["e2e"]["mean"]["measured_s"].as<double>(), 1e-5);
  EXPECT_EQ(doc["preemptions_sim"].as<int>(), 0);

  const auto bad = RunFleetsim(args + " --requests-csv /nonexistent-dir/requests.csv");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--requests-csv"), std::string::npos) << bad.err;
}

// --series-csv writes one row per tick of the run's timeseries.csv: the run's own figures
// beside the replay's, whose output and prompt tokens add up to the requests' (the replay
// ends inside the series); the summary's series errors are those rows' means. The series'
// clock is found from the run's own prompt counts (every first token in its tick).
TEST(ValidateCli, SeriesCsvHasEveryTickBesideTheRunsOwn) {
  FLEETSIM_REQUIRE_SHARED_DATA();
  const auto data = testing::SharedDataDir();
  const auto run = data / kPro6000LlamaRun;
  const std::string args = Pro6000LlamaValidate();
  const auto [doc, written] = Pro6000LlamaWriting("--series-csv");
  const auto measured = CsvRows(run / "timeseries.csv");  // t,prompt,gen,running,waiting,kv
  ASSERT_FALSE(written.empty());
  EXPECT_EQ(
      written[0],
      (std::vector<std::string>{
          "t_s", "running_sim", "running_measured", "waiting_sim", "waiting_measured",
          "output_tokens_per_s_sim", "output_tokens_per_s_measured", "prompt_tokens_per_s_sim",
          "prompt_tokens_per_s_measured", "kv_cache_pct_sim", "kv_cache_pct_measured"}));
  ASSERT_EQ(written.size(), measured.size());
  double outputs_sim = 0, prompts_sim = 0, running_error = 0;
  for (std::size_t i = 1; i < written.size(); ++i) {
    ASSERT_EQ(written[i].size(), 11u);
    EXPECT_DOUBLE_EQ(std::stod(written[i][0]), std::stod(measured[i][0]));  // t
    EXPECT_EQ(std::stoll(written[i][2]), std::stoll(measured[i][3]));       // running
    EXPECT_EQ(std::stoll(written[i][4]), std::stoll(measured[i][4]));       // waiting
    EXPECT_DOUBLE_EQ(std::stod(written[i][6]), std::stod(measured[i][2]));  // output tokens
    EXPECT_DOUBLE_EQ(std::stod(written[i][8]), std::stod(measured[i][1]));  // prompt tokens
    // This run's harness wrote 0 for the KV usage (it did not read it yet): not compared.
    EXPECT_EQ(std::stod(measured[i][5]), 0.0);
    EXPECT_EQ(written[i][10], "");
    EXPECT_GE(std::stod(written[i][9]), 0.0);
    EXPECT_LE(std::stod(written[i][9]), 100.0);
    outputs_sim += std::stod(written[i][5]);
    prompts_sim += std::stod(written[i][7]);
    running_error += std::abs(std::stod(written[i][1]) - std::stod(written[i][2]));
  }
  EXPECT_DOUBLE_EQ(outputs_sim, 195753);  // the 300 requests' output tokens
  EXPECT_DOUBLE_EQ(prompts_sim, 257239);  // and their prompts
  const YAML::Node series = doc["series"];
  EXPECT_EQ(series["points"].as<std::size_t>(), written.size() - 1);
  EXPECT_NEAR(series["running_mae"].as<double>(),
              running_error / static_cast<double>(written.size() - 1), 1e-9);
  EXPECT_GT(series["output_tokens_per_s_mae"].as<double>(), 0);
  EXPECT_NEAR(series["output_tokens_per_s_measured_mean"].as<double>(),
              195753.0 / static_cast<double>(written.size() - 1), 1e-6);
  // The benchmark's clock starts 80 ms before the first intake: there every first token
  // of the run is in the tick its prompt is counted in.
  EXPECT_TRUE(series["origin_from_prompt_column"].as<bool>());
  EXPECT_EQ(series["prompt_mismatch"].as<double>(), 0);
  EXPECT_GT(series["origin_lead_s"].as<double>(), 0.07);
  EXPECT_LT(series["origin_lead_s"].as<double>(), 0.09);
  EXPECT_TRUE(series["kv_cache_unrecorded"].as<bool>());
  EXPECT_FALSE(series["kv_cache_pct_mae"]);
  const auto text = RunFleetsim(args.substr(0, args.size() - std::string(" --json").size()));
  EXPECT_NE(text.out.find("kv cache: not recorded"), std::string::npos) << text.out;

  const auto bad = RunFleetsim(args + " --series-csv /nonexistent-dir/series.csv");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--series-csv"), std::string::npos) << bad.err;

  // A run without a series replays and says so; asking for the rows is refused up front.
  const auto bare = CopyRunWithMeta(run, "no-series", [](std::string&) { return true; });
  std::filesystem::remove(bare / "timeseries.csv");
  const std::string bare_args =
      "validate vllm-bench " + bare.string() + " --bundle " +
      (data / "profiles/llmservingsim/perf/RTXPRO6000/meta-llama/Llama-3.1-8B/bf16").string() +
      " --model llama-3.1-8b --hardware RTX-PRO-6000";
  const std::filesystem::path csv = bare / "series.csv";
  const auto plain = RunFleetsim(bare_args);
  const auto refused = RunFleetsim(bare_args + " --series-csv " + csv.string());
  const bool refused_wrote = std::filesystem::exists(csv);
  std::filesystem::remove_all(bare);
  EXPECT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_NE(plain.out.find("series: the run has no timeseries.csv"), std::string::npos)
      << plain.out;
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.err.find("--series-csv"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("no timeseries.csv"), std::string::npos) << refused.err;
  EXPECT_FALSE(refused_wrote);

  // A tick length the series cannot be read with is an error at meta.json's setting.
  const auto zero_tick = CopyRunWithMeta(run, "zero-tick", [](std::string& meta) {
    const std::string one = "\"tick_seconds\": 1.0";
    const std::size_t at = meta.find(one);
    if (at == std::string::npos) return false;
    meta.replace(at, one.size(), "\"tick_seconds\": 0");
    return true;
  });
  const auto no_tick = RunFleetsim(
      "validate vllm-bench " + zero_tick.string() + " --bundle " +
      (data / "profiles/llmservingsim/perf/RTXPRO6000/meta-llama/Llama-3.1-8B/bf16").string() +
      " --model llama-3.1-8b --hardware RTX-PRO-6000");
  std::filesystem::remove_all(zero_tick);
  EXPECT_EQ(no_tick.exit_code, 2);
  EXPECT_NE(no_tick.err.find("meta.json"), std::string::npos) << no_tick.err;
  EXPECT_NE(no_tick.err.find("tick_seconds"), std::string::npos) << no_tick.err;
  EXPECT_NE(no_tick.err.find("between 0.001 and 1e9 s"), std::string::npos) << no_tick.err;
}

// The RTX 4090 run recorded its KV pool's usage each tick (vLLM's kv_cache_usage): the
// replay's follows it -- 2.1 points mean absolute error (docs/VALIDATION.md) -- the
// summary's error is the rows' mean, and the rows carry the run's own column. Its pool is
// full for most of the run, so the replay preempts; the summary's count is the requests'.
TEST(ValidateCli, Rtx4090KvCacheUsageFollowsTheRunsAndItsPreemptionsAreCounted) {
  FLEETSIM_REQUIRE_SHARED_DATA();
  const auto data = testing::SharedDataDir();
  const auto run = data / "traces/llmservingsim_vllm_bench/RTX4090/Llama-3.1-8B";
  const std::filesystem::path dir = std::filesystem::temp_directory_path();
  const std::string tag = std::to_string(::getpid());
  const std::filesystem::path series_csv = dir / ("fleetsim-kv-series-" + tag);
  const std::filesystem::path requests_csv = dir / ("fleetsim-kv-requests-" + tag);
  const std::string args =
      "validate vllm-bench " + run.string() + " --bundle " +
      (data / "profiles/llmservingsim/perf/RTX4090/meta-llama/Llama-3.1-8B/bf16").string() +
      " --model llama-3.1-8b";
  const auto r = RunFleetsim(args + " --json --series-csv " + series_csv.string() +
                             " --requests-csv " + requests_csv.string());
  const auto rows = CsvRows(series_csv);
  const auto requests = CsvRows(requests_csv);
  std::filesystem::remove(series_csv);
  std::filesystem::remove(requests_csv);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const YAML::Node doc = YAML::Load(r.out);
  const auto measured = CsvRows(run / "timeseries.csv");
  ASSERT_EQ(rows.size(), measured.size());
  double error = 0, saturated_low = 100;
  for (std::size_t i = 1; i < rows.size(); ++i) {
    ASSERT_EQ(rows[i].size(), 11u);
    EXPECT_DOUBLE_EQ(std::stod(rows[i][10]), std::stod(measured[i][5]));
    const double sim = std::stod(rows[i][9]);
    error += std::abs(sim - std::stod(rows[i][10]));
    if (std::stod(rows[i][10]) >= 95) saturated_low = std::min(saturated_low, sim);
  }
  const YAML::Node series = doc["series"];
  EXPECT_FALSE(series["kv_cache_unrecorded"].as<bool>());
  EXPECT_NEAR(series["kv_cache_pct_mae"].as<double>(), error / static_cast<double>(rows.size() - 1),
              1e-9);
  EXPECT_NEAR(series["kv_cache_pct_measured_mean"].as<double>(), 92.74, 0.01);
  EXPECT_LT(series["kv_cache_pct_mae"].as<double>(), 4.0);
  // Where the run's pool was full (153 ticks at 95 % or more), the replay's was too.
  EXPECT_GT(saturated_low, 85.0);

  int64_t preemptions = 0, preempted = 0;
  ASSERT_EQ(requests.size(), 301u);
  for (std::size_t i = 1; i < requests.size(); ++i) {
    const int64_t n = std::stoll(requests[i][11]);
    preemptions += n;
    preempted += n > 0 ? 1 : 0;
  }
  EXPECT_GT(preemptions, 0);
  EXPECT_EQ(doc["preemptions_sim"].as<int64_t>(), preemptions);
  EXPECT_EQ(doc["preempted_requests_sim"].as<int64_t>(), preempted);

  const auto text = RunFleetsim(args);
  EXPECT_NE(text.out.find("kv cache: mean abs error"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("preemptions: " + std::to_string(preemptions) + " in the replay, of " +
                          std::to_string(preempted) + " requests"),
            std::string::npos)
      << text.out;
}

// The Llama runs on fleetsim's analytic bundles (analytic-15): issue 17's analytic targets
// (TPOT and E2E within 8 %, TTFT within 15 %) on the cells each run meets, REGRESSION
// BOUNDS (the figures of docs/VALIDATION.md, measured 2026-12-05, within 1.5 points) on
// those it misses.
TEST(ValidateCli, Llama8BOnTheAnalyticBundles) {
  FLEETSIM_REQUIRE_SHARED_DATA();
  const auto data = testing::SharedDataDir();
  const struct {
    const char* run;
    const char* hardware;
    std::vector<AnalyticCell> cells;
  } runs[] = {
      {"RTX4090/Llama-3.1-8B",
       "RTX-4090",
       {{"ttft", "mean", -0.099},
        {"ttft", "median", -0.113},
        {"tpot", "mean", -0.100},
        {"tpot", "median", -0.095},
        {"e2e", "mean", -0.099},
        {"e2e", "median", -0.073}}},
      {"RTXPRO6000/Llama-3.1-8B",
       "RTX-PRO-6000",
       {{"ttft", "mean", -0.025},
        {"ttft", "median", -0.141},
        {"tpot", "mean", -0.013},
        {"tpot", "median", -0.001},
        {"e2e", "mean", -0.017},
        {"e2e", "median", -0.001}}},
  };
  for (const auto& run : runs) {
    SCOPED_TRACE(run.run);
    const std::filesystem::path bundle = std::filesystem::temp_directory_path() /
                                         ("fleetsim-llama-analytic-" + std::to_string(::getpid()));
    std::filesystem::remove_all(bundle);
    const auto built =
        RunFleetsim(std::string("bundle build --source analytic --model llama-3.1-8b --hardware ") +
                    run.hardware + " --tp 1 --out " + bundle.string());
    ASSERT_EQ(built.exit_code, 0) << built.err;
    const auto r = RunFleetsim("validate vllm-bench " +
                               (data / "traces/llmservingsim_vllm_bench" / run.run).string() +
                               " --bundle " + bundle.string() +
                               " --model llama-3.1-8b --hardware " + run.hardware + " --json");
    std::filesystem::remove_all(bundle);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ExpectAnalyticTargetOrBound(YAML::Load(r.out), run.cells);
  }
}

// The mean simulated TTFT of a --requests-csv file's first `n` requests.
double MeanSimulatedTtftOfFirst(const std::filesystem::path& csv, int n) {
  std::ifstream in(csv);
  std::string line;
  std::getline(in, line);  // the header
  double sum = 0;
  int rows = 0;
  for (; rows < n && std::getline(in, line); ++rows) {
    std::stringstream fields(line);
    std::string cell;
    for (int column = 0; column <= 5; ++column)
      std::getline(fields, cell, ',');
    sum += std::stod(cell);  // ttft_sim_s
  }
  return rows == 0 ? 0 : sum / rows;
}

// A run's async_scheduling (engine_kwargs, else resolved_config.scheduler_config, else
// vLLM's default, on) is what the replay schedules with. The RTX PRO 6000 run's first 40
// requests arrive before it saturates (docs/VALIDATION.md): each waits about a step less
// with the run marked off, joining the step after its intake instead of the one after.
TEST(ValidateCli, TheRunsAsyncSchedulingIsReplayed) {
  FLEETSIM_REQUIRE_SHARED_DATA();
  const auto data = testing::SharedDataDir();
  const std::filesystem::path real =
      data / "traces/llmservingsim_vllm_bench/RTXPRO6000/Llama-3.1-8B";
  const std::filesystem::path run = CopyRunWithMeta(real, "async", [](std::string& meta) {
    const std::size_t at = meta.find("\"max_num_seqs\"");
    if (at == std::string::npos) return false;
    meta.insert(at, "\"async_scheduling\": false, ");
    return true;
  });
  const std::string rest =
      " --bundle " +
      (data / "profiles/llmservingsim/perf/RTXPRO6000/meta-llama/Llama-3.1-8B/bf16").string() +
      " --model llama-3.1-8b --hardware RTX-PRO-6000 --requests-csv ";
  const auto sync =
      RunFleetsim("validate vllm-bench " + run.string() + rest + (run / "sync.csv").string());
  const auto async =
      RunFleetsim("validate vllm-bench " + real.string() + rest + (run / "async.csv").string());
  ASSERT_EQ(sync.exit_code, 0) << sync.err;
  ASSERT_EQ(async.exit_code, 0) << async.err;
  const double sync_ttft = MeanSimulatedTtftOfFirst(run / "sync.csv", 40);
  const double async_ttft = MeanSimulatedTtftOfFirst(run / "async.csv", 40);
  std::filesystem::remove_all(run);
  // A decode step of this run is about 30 ms (its TPOT); a step sooner saves at least 10.
  std::printf("first 40 requests, mean TTFT: %.4f s sync, %.4f s async\n", sync_ttft, async_ttft);
  EXPECT_GT(async_ttft - sync_ttft, 0.010) << sync_ttft << " against " << async_ttft;
  EXPECT_LT(async_ttft - sync_ttft, 0.060) << sync_ttft << " against " << async_ttft;
}

}  // namespace
}  // namespace fleetsim
