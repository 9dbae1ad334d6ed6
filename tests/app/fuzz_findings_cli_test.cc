// Every input the fuzzers found a crash with (fuzz/findings/<harness>/, docs/FUZZING.md),
// fed to the fleetsim binary as a user would: one located error line and exit 2, never
// an escaped exception, a crash or a hang. A finding saved under a harness this test has
// no command for fails it, so that each new finding is replayed here once it is fixed.
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include <gtest/gtest.h>

#include "support/run_command.h"

namespace fleetsim {
namespace {

namespace fs = std::filesystem;
using testing::RunFleetsim;

const std::string kSource = FLEETSIM_SOURCE_DIR;
const std::string kSingle = kSource + "/cluster_configs/single_node_single_instance.yaml";

// The command that reads a finding of each harness the way the harness does.
std::string CommandFor(const std::string& harness, const std::string& file,
                       const std::string& output) {
  const std::string run = "run --quiet --output " + output + " ";
  if (harness == "generator_spec") return run + "--cluster " + kSingle + " --workload " + file;
  if (harness == "cluster_config") return run + "--cluster " + file;
  if (harness.rfind("trace_", 0) == 0) {
    std::string format = harness.substr(6);
    if (format == "vllm_bench") format = "vllm-bench";
    return run + "--cluster " + kSingle + " --workload " + file + " --format " + format;
  }
  if (harness == "model_card") return "inspect --model " + file;
  if (harness == "nccl_tests")
    return "bundle compare-collectives --nccl-tests " + file +
           " --op all_reduce --hardware H100-SXM";
  return "";
}

void ExpectOneLocatedLine(const std::string& command, const std::string& file) {
  const testing::CommandResult r = RunFleetsim(command);
  EXPECT_EQ(r.exit_code, 2) << command << "\n" << r.err;
  EXPECT_EQ(r.err.rfind("fleetsim: error: ", 0), 0u) << command << "\n" << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "one line:\n" << r.err;
  EXPECT_NE(r.err.find(file + ":"), std::string::npos) << r.err;
}

TEST(FuzzFindingsCli, EverySavedFindingIsOneLocatedLineAndExit2) {
  const fs::path output =
      fs::temp_directory_path() / ("fleetsim-finding-" + std::to_string(::getpid()) + ".h5");
  int findings = 0;
  for (const auto& harness : fs::directory_iterator(kSource + "/fuzz/findings")) {
    if (!harness.is_directory()) continue;
    const std::string name = harness.path().filename().string();
    for (const auto& finding : fs::directory_iterator(harness.path())) {
      if (finding.path().extension() == ".md") continue;
      SCOPED_TRACE(finding.path().string());
      const std::string command = CommandFor(name, finding.path().string(), output.string());
      ASSERT_FALSE(command.empty())
          << "no command replays findings of harness " << name << ": add one to CommandFor";
      ExpectOneLocatedLine(command, finding.path().string());
      EXPECT_FALSE(fs::exists(output)) << "a refused input left " << output;
      ++findings;
    }
  }
  EXPECT_GE(findings, 5);  // the five saved by the first campaigns, at least
}

// The model-card twin of the hardware finding: a name too long for a file name.
TEST(FuzzFindingsCli, AModelNameTooLongForTheFileSystemIsOneLocatedLine) {
  const fs::path dir =
      fs::temp_directory_path() / ("fleetsim-long-model-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string config = (dir / "cluster.yaml").string();
  std::ofstream(config) << "instance_groups:\n  - {name: g, model: " << std::string(300, 'm')
                        << ", hardware: H100-SXM}\n";
  const testing::CommandResult r =
      RunFleetsim("run --quiet --cluster " + config + " --output " + (dir / "o.h5").string());
  fs::remove_all(dir);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("cluster.yaml:2: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("unknown model 'mmmm"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "one line:\n" << r.err;
  EXPECT_LT(r.err.size(), 700u) << r.err;
}

}  // namespace
}  // namespace fleetsim
