// `fleetsim bundle calibrate-empty-tiles`, as a user runs it: the fit on the table the
// analytic constant comes from, and the refusals.
#include <string>

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "support/run_command.h"
#include "support/shared_data.h"
#include "support/temp_file.h"

namespace fleetsim {
namespace {

using testing::RunFleetsim;

std::string Qwen32B() {
  return (testing::SharedDataDir() / "profiles/llmservingsim/perf/RTXPRO6000/Qwen/Qwen3-32B/bf16")
      .string();
}

TEST(CalibrateEmptyTilesCli, PrintsTheFitBesideTheAnalyticConstant) {
  FLEETSIM_REQUIRE_SHARED_DATA();
  const auto r = RunFleetsim("bundle calibrate-empty-tiles " + Qwen32B() +
                             " --model qwen3-32b --hardware RTX-PRO-6000 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const YAML::Node doc = YAML::Load(r.out);
  EXPECT_EQ(doc["query_heads_per_rank"].as<double>(), 64);
  EXPECT_EQ(doc["compute_units"].as<double>(), 188);
  EXPECT_EQ(doc["empty_tile_s"].as<double>(), doc["shipped_empty_tile_s"].as<double>());
  // TP 2 reads tp2/ with half the heads: another table, another (held-out) fit.
  const auto tp2 = RunFleetsim("bundle calibrate-empty-tiles " + Qwen32B() +
                               " --model qwen3-32b --hardware RTX-PRO-6000 --tp 2 --json");
  ASSERT_EQ(tp2.exit_code, 0) << tp2.err;
  const YAML::Node two = YAML::Load(tp2.out);
  EXPECT_EQ(two["query_heads_per_rank"].as<double>(), 32);
  EXPECT_NE(two["empty_tile_s"].as<double>(), doc["empty_tile_s"].as<double>());
  EXPECT_NE(two["table"].as<std::string>().find("tp2"), std::string::npos);
  // The summary names the constant and how far this table is from it.
  const auto text = RunFleetsim("bundle calibrate-empty-tiles " + Qwen32B() +
                                " --model qwen3-32b --hardware RTX-PRO-6000");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("attention_empty_tile_s"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("+0.0 %"), std::string::npos) << text.out;
}

// A round trip that needs no measured data: fleetsim's own analytic bundle charges every
// empty tile the shipped constant, so the fit on its table must find that constant again,
// up to what the waves of real tiles add (measured 2026-12-05: +1.2 % on the RTX 4090,
// +0.4 % on the RTX PRO 6000).
TEST(CalibrateEmptyTilesCli, RecoversTheAnalyticBundlesOwnConstant) {
  for (const char* gpu : {"RTX-4090", "RTX-PRO-6000"}) {
    SCOPED_TRACE(gpu);
    testing::TempFile scratch("notes.txt", "");
    const std::string bundle = (scratch.dir() / "bundle").string();
    const auto built =
        RunFleetsim(std::string("bundle build --source analytic --model llama-3.1-8b "
                                "--hardware ") +
                    gpu + " --tp 1 --out " + bundle);
    ASSERT_EQ(built.exit_code, 0) << built.err;
    const auto r = RunFleetsim("bundle calibrate-empty-tiles " + bundle +
                               " --model llama-3.1-8b --hardware " + gpu + " --json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const YAML::Node doc = YAML::Load(r.out);
    EXPECT_NEAR(doc["empty_tile_s"].as<double>() / doc["shipped_empty_tile_s"].as<double>(), 1.0,
                0.03);
    EXPECT_GT(doc["cells"].as<int>(), 1000);
  }
}

TEST(CalibrateEmptyTilesCli, RefusesAGpuWhoseBackendLaunchesNoEmptyTilesAndAMissingDegree) {
  FLEETSIM_REQUIRE_SHARED_DATA();
  const auto packed = RunFleetsim("bundle calibrate-empty-tiles " + Qwen32B() +
                                  " --model qwen3-32b --hardware H100-SXM");
  EXPECT_EQ(packed.exit_code, 2);
  EXPECT_NE(packed.err.find("--hardware"), std::string::npos) << packed.err;
  EXPECT_NE(packed.err.find("no empty tiles"), std::string::npos) << packed.err;
  // ROCm's query heads are not packed either, but its mixed step is two calls.
  const auto rocm = RunFleetsim("bundle calibrate-empty-tiles " + Qwen32B() +
                                " --model qwen3-32b --hardware MI300X");
  EXPECT_EQ(rocm.exit_code, 2);
  EXPECT_NE(rocm.err.find("no empty tiles"), std::string::npos) << rocm.err;
  const auto tp4 = RunFleetsim("bundle calibrate-empty-tiles " + Qwen32B() +
                               " --model qwen3-32b --hardware RTX-PRO-6000 --tp 4");
  EXPECT_EQ(tp4.exit_code, 2);
  EXPECT_EQ(tp4.err.find('\n'), tp4.err.size() - 1) << "one line: " << tp4.err;
  EXPECT_NE(tp4.err.find("TP 4"), std::string::npos) << tp4.err;
}

}  // namespace
}  // namespace fleetsim
