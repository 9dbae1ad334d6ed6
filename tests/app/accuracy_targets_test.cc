// The analytic builder's accuracy targets, measured the way a user measures them:
//  - in sample, `bundle compare-kernels` against the H100 and H200 tables the fit used:
//    MAPE <= 20 % for GEMM, prefill and decode attention, and (H200) each GDN kernel;
//  - out of sample, `bundle build --source analytic` then `bundle compare` against every
//    measured LLMServingSim bundle, which nothing was fitted on but one constant (the empty
//    FA2 tile's cost, on the Qwen3-32B TP 1 table): MAPE <= 25 % per layer kind.
//    A kind with several kernels (dense, lm_head + sampler) is judged by its kernels summed
//    at each shape (the `sum` row): that is the layer's cost, the figure a step pays. The
//    per-kernel-cell `all` row is printed beside it, not held to the target (docs/BUNDLES.md
//    says which kernels miss per cell, and why).
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <utility>

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "support/run_command.h"
#include "support/shared_data.h"
#include "support/temp_file.h"

namespace fleetsim {
namespace {

using testing::RunFleetsim;
using testing::SharedDataDir;

constexpr double kInSampleTarget = 0.20;
constexpr double kOutOfSampleTarget = 0.25;

void ExpectInSampleClasses(const std::string& system, const std::string& hardware,
                           const std::set<std::string>& classes) {
  const auto r = RunFleetsim("bundle compare-kernels --system " + system + " --hardware " +
                             hardware + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::set<std::string> seen;
  for (const YAML::Node& c : YAML::Load(r.out)["classes"]) {
    const std::string cls = c["class"].as<std::string>();
    if (classes.count(cls) == 0) continue;  // MoE is reported but is not a target class
    seen.insert(cls);
    EXPECT_LE(c["mape"].as<double>(), kInSampleTarget) << system << " " << cls;
  }
  EXPECT_EQ(seen, classes) << system;
}

TEST(AccuracyTargets, InSampleKernelClassesOnH100AndH200) {
  FLEETSIM_REQUIRE_SHARED_DATA();
  ExpectInSampleClasses("h100_sxm", "H100-SXM", {"gemm", "prefill_attention", "decode_attention"});
  ExpectInSampleClasses("h200_sxm", "H200-SXM",
                        {"gemm", "prefill_attention", "decode_attention", "gdn_conv_prefill",
                         "gdn_prefill", "gdn_conv_decode", "gdn_decode"});
}

struct MeasuredBundle {
  std::string model;     // our model card
  std::string hardware;  // our catalog GPU
  std::string tps;       // the TP degrees the measured bundle holds
  std::string folder;    // under profiles/llmservingsim/perf
  bool has_moe;          // the measured bundle has a moe table (TP 1 only)
};

// (tp, kind) -> MAPE of the kind: its `sum` row where it has one, else its `all` row.
std::map<std::pair<int, std::string>, double> MapeByKind(const YAML::Node& report) {
  std::map<std::pair<int, std::string>, double> all, sum;
  for (const YAML::Node& k : report["kinds"]) {
    const auto key = std::make_pair(k["tp"].as<int>(), k["kind"].as<std::string>());
    const std::string row = k["kernel"].as<std::string>();
    if (row == "all") all[key] = k["mape"].as<double>();
    if (row == "sum") sum[key] = k["mape"].as<double>();
  }
  for (const auto& [key, mape] : sum)
    all[key] = mape;
  return all;
}

TEST(AccuracyTargets, OutOfSampleLayerKindsOnEveryLlmServingSimBundle) {
  FLEETSIM_REQUIRE_SHARED_DATA();
  const std::filesystem::path perf = SharedDataDir() / "profiles" / "llmservingsim" / "perf";
  const MeasuredBundle bundles[] = {
      {"llama-3.1-8b", "RTX-4090", "1", "RTX4090/meta-llama/Llama-3.1-8B/bf16", false},
      {"llama-3.1-8b", "RTX-PRO-6000", "1,2", "RTXPRO6000/meta-llama/Llama-3.1-8B/bf16", false},
      {"qwen3-32b", "RTX-PRO-6000", "1,2", "RTXPRO6000/Qwen/Qwen3-32B/bf16", false},
      {"qwen3-30b-a3b", "RTX-PRO-6000", "1,2", "RTXPRO6000/Qwen/Qwen3-30B-A3B-Instruct-2507/bf16",
       true},
  };
  for (const MeasuredBundle& b : bundles) {
    SCOPED_TRACE(b.model + " on " + b.hardware);
    testing::TempFile scratch("notes.txt", "");  // a fresh folder for the bundle
    const std::string out = (scratch.dir() / "bundle").string();
    const auto build =
        RunFleetsim("bundle build --source analytic --model " + b.model + " --hardware " +
                    b.hardware + " --tp " + b.tps + " --out " + out);
    ASSERT_EQ(build.exit_code, 0) << build.err;
    const auto compare =
        RunFleetsim("bundle compare " + out + " " + (perf / b.folder).string() + " --json");
    ASSERT_EQ(compare.exit_code, 0) << compare.err;
    const YAML::Node report = YAML::Load(compare.out);
    // A kernel the analytic bundle lacks would drop out of the `sum` rows unseen.
    EXPECT_EQ(report["only_in_reference"].size(), 0u) << compare.out.substr(0, 2000);
    const auto mape = MapeByKind(report);

    std::set<std::pair<int, std::string>> expected;
    for (const int tp : b.tps == "1" ? std::set<int>{1} : std::set<int>{1, 2}) {
      for (const char* kind :
           {"dense", "per_sequence", "attention_prefill", "attention_decode", "attention_mixed"})
        expected.insert({tp, kind});
    }
    if (b.has_moe) expected.insert({1, "moe"});
    std::set<std::pair<int, std::string>> seen;
    for (const auto& [key, value] : mape) {
      seen.insert(key);
      EXPECT_LE(value, kOutOfSampleTarget) << "TP " << key.first << " " << key.second;
    }
    EXPECT_EQ(seen, expected);
  }
}

}  // namespace
}  // namespace fleetsim
