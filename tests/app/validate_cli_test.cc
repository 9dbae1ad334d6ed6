// `fleetsim validate vllm-bench` on the real vLLM runs in ../shared/data, with their
// matching measured bundles: the fidelity targets of the engine issue, as a user runs it.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "support/run_command.h"
#include "support/shared_data.h"

namespace fleetsim {
namespace {

using testing::RunFleetsim;

struct Case {
  const char* run;
  const char* bundle;
  const char* extra;
};

void CheckTargets(const Case& c) {
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
}

TEST(ValidateCli, Rtx4090Llama8BMeetsTheTargets) {
  FLEETSIM_REQUIRE_SHARED_DATA();
  CheckTargets({"RTX4090/Llama-3.1-8B", "RTX4090/meta-llama/Llama-3.1-8B/bf16", ""});
}

TEST(ValidateCli, RtxPro6000Llama8BMeetsTheTargets) {
  FLEETSIM_REQUIRE_SHARED_DATA();
  // Its meta.json has no KV capacity: 0.9 of the GPU's memory minus the weights.
  CheckTargets({"RTXPRO6000/Llama-3.1-8B", "RTXPRO6000/meta-llama/Llama-3.1-8B/bf16",
                "--hardware RTX-PRO-6000"});
}

// The DP 2 expert-parallel run misses issue 17's targets (LLMServingSim's -13.6 / -21.8,
// -1.7 / -1.6, -2.2 / -2.0 %): these are REGRESSION BOUNDS, the errors measured on
// 2026-12-03 (docs/VALIDATION.md) within 1.5 points, not targets.
TEST(ValidateCli, RtxPro6000Qwen30BDataParallelExpertParallelReplays) {
  FLEETSIM_REQUIRE_SHARED_DATA();
  const auto data = testing::SharedDataDir();
  const auto r = RunFleetsim(
      "validate vllm-bench " +
      (data / "traces/llmservingsim_vllm_bench/RTXPRO6000/Qwen3-30B-A3B-Instruct-2507").string() +
      " --bundle " +
      (data / "profiles/llmservingsim/perf/RTXPRO6000/Qwen/Qwen3-30B-A3B-Instruct-2507/bf16")
          .string() +
      " --model qwen3-30b-a3b --hardware RTX-PRO-6000 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const YAML::Node doc = YAML::Load(r.out);
  EXPECT_EQ(doc["requests"].as<int>(), 300);
  const struct {
    const char* metric;
    const char* stat;
    double measured;
  } bounds[] = {{"ttft", "mean", -0.450},   {"ttft", "median", -0.308}, {"tpot", "mean", -0.065},
                {"tpot", "median", -0.075}, {"e2e", "mean", -0.078},    {"e2e", "median", -0.074}};
  for (const auto& b : bounds) {
    EXPECT_NEAR(doc[b.metric][b.stat]["error"].as<double>(), b.measured, 0.015)
        << b.metric << " " << b.stat;
  }
  // The per-second series sums both ranks, as the run's does.
  EXPECT_LT(doc["series"]["running_mae"].as<double>(),
            0.15 * doc["series"]["running_measured_mean"].as<double>());
}

// The same run on fleetsim's analytic bundle (analytic-12): issue 17's 8 % / 15 % targets
// missed, so REGRESSION BOUNDS again (docs/VALIDATION.md, within 1.5 points).
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
  const YAML::Node doc = YAML::Load(r.out);
  const struct {
    const char* metric;
    const char* stat;
    double measured;
  } bounds[] = {{"ttft", "mean", -0.581},   {"ttft", "median", -0.356}, {"tpot", "mean", -0.118},
                {"tpot", "median", -0.128}, {"e2e", "mean", -0.133},    {"e2e", "median", -0.130}};
  for (const auto& b : bounds) {
    EXPECT_NEAR(doc[b.metric][b.stat]["error"].as<double>(), b.measured, 0.015)
        << b.metric << " " << b.stat;
  }
}

TEST(ValidateCli, DataParallelWithoutExpertParallelismIsRefusedAtItsSetting) {
  FLEETSIM_REQUIRE_SHARED_DATA();
  const auto data = testing::SharedDataDir();
  const std::filesystem::path real =
      data / "traces/llmservingsim_vllm_bench/RTXPRO6000/Qwen3-30B-A3B-Instruct-2507";
  const std::filesystem::path run = std::filesystem::temp_directory_path() /
                                    ("fleetsim-validate-dp-" + std::to_string(::getpid()));
  std::filesystem::remove_all(run);
  std::filesystem::create_directories(run);
  for (const char* file : {"requests.jsonl", "timeseries.csv"})
    std::filesystem::copy_file(real / file, run / file);
  std::ifstream in(real / "meta.json");
  std::string meta((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::size_t at = meta.find("\"enable_expert_parallel\": true");
  ASSERT_NE(at, std::string::npos);
  meta.replace(at, std::string("\"enable_expert_parallel\": true").size(),
               "\"enable_expert_parallel\": false");
  std::ofstream(run / "meta.json") << meta;
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

}  // namespace
}  // namespace fleetsim
