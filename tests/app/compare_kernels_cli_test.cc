// `fleetsim bundle compare-kernels`: the calibrated analytic kernels against a GPU's
// measured per-op tables, as a user runs it.
#include <map>
#include <string>

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "support/run_command.h"
#include "support/shared_data.h"

namespace fleetsim {
namespace {

using testing::RunFleetsim;

// Class name -> MAPE from a compare-kernels --json report.
std::map<std::string, double> MapeByClass(const YAML::Node& report) {
  std::map<std::string, double> out;
  for (const YAML::Node& c : report["classes"])
    out[c["class"].as<std::string>()] = c["mape"].as<double>();
  return out;
}

// On the fit's own GPU the command must report what the calibration reports after fitting:
// the same rows, the same model, the same errors.
TEST(CompareKernelsCli, AgreesWithTheCalibrationOnH200) {
  FLEETSIM_REQUIRE_SHARED_DATA();
  const auto compare =
      RunFleetsim("bundle compare-kernels --system h200_sxm --hardware H200-SXM --json");
  ASSERT_EQ(compare.exit_code, 0) << compare.err;
  const std::map<std::string, double> mape = MapeByClass(YAML::Load(compare.out));
  const auto calibrate = RunFleetsim("bundle calibrate --json");
  ASSERT_EQ(calibrate.exit_code, 0) << calibrate.err;
  int checked = 0;
  for (const YAML::Node& c : YAML::Load(calibrate.out)["classes"]) {
    if (c["system"].as<std::string>() != "h200_sxm") continue;
    const std::string cls = c["class"].as<std::string>();
    ASSERT_EQ(mape.count(cls), 1u) << cls;
    EXPECT_NEAR(mape.at(cls), c["after"]["mape"].as<double>(), 1e-12) << cls;
    ++checked;
  }
  EXPECT_EQ(checked, 8);  // GEMM, two attention classes, MoE, four GDN kernels
}

// The A100 tables were not used to fit anything: the command reads them (their older
// format has no window_size column) and reports every class it finds, with its worst rows.
TEST(CompareKernelsCli, ReadsTheHeldOutA100Tables) {
  FLEETSIM_REQUIRE_SHARED_DATA();
  const auto r =
      RunFleetsim("bundle compare-kernels --system a100_sxm --hardware A100-SXM-80GB --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const YAML::Node report = YAML::Load(r.out);
  EXPECT_EQ(report["system"].as<std::string>(), "a100_sxm");
  const std::map<std::string, double> mape = MapeByClass(report);
  for (const char* cls : {"gemm", "prefill_attention", "decode_attention"}) {
    ASSERT_EQ(mape.count(cls), 1u) << cls;
    EXPECT_GT(mape.at(cls), 0.0) << cls;
  }
  for (const YAML::Node& c : report["classes"]) {
    EXPECT_GT(c["rows"].as<int>(), 1000) << c["class"];
    EXPECT_EQ(c["worst"].size(), 5u) << c["class"];
  }
}

// Another GPU's tables are compared (a proxy's error can be the question), with a warning.
TEST(CompareKernelsCli, AnotherGpusTablesWarn) {
  FLEETSIM_REQUIRE_SHARED_DATA();
  const auto other =
      RunFleetsim("bundle compare-kernels --system h100_sxm --hardware A100-SXM-80GB --json");
  EXPECT_EQ(other.exit_code, 0) << other.err;
  EXPECT_NE(other.err.find("warning: A100-SXM-80GB's kernels against the h100_sxm tables"),
            std::string::npos)
      << other.err;
  const auto own =
      RunFleetsim("bundle compare-kernels --system h100_sxm --hardware H100-SXM --json");
  EXPECT_EQ(own.exit_code, 0) << own.err;
  EXPECT_EQ(own.err.find("warning"), std::string::npos) << own.err;
}

TEST(CompareKernelsCli, UnknownSystemIsOneLineAndExitTwo) {
  FLEETSIM_REQUIRE_SHARED_DATA();
  const auto r = RunFleetsim("bundle compare-kernels --system b200 --hardware B200");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown system 'b200' (known: a100_sxm, h100_sxm, h200_sxm)"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.out, "");
}

}  // namespace
}  // namespace fleetsim
