// `fleetsim validate vllm-bench` on the real vLLM runs in ../shared/data, with their
// matching measured bundles: the fidelity targets of the engine issue, as a user runs it.
#include <cmath>

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

}  // namespace
}  // namespace fleetsim
