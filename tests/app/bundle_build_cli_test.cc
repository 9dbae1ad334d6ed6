// `fleetsim bundle build` as a user runs it: the wrong combinations of options are one-line
// errors naming the option, with exit code 2.
#include <filesystem>
#include <string>
#include <unistd.h>

#include <gtest/gtest.h>

#include "support/run_command.h"

namespace fleetsim {
namespace {

using testing::RunFleetsim;

// A folder the build would write, unique to this process.
std::string UnusedOut() {
  return (std::filesystem::temp_directory_path() /
          ("fleetsim-unused-bundle-" + std::to_string(::getpid())))
      .string();
}

TEST(BundleBuildCli, KernelTablesAreReadOnlyByKernelDb) {
  const auto r =
      RunFleetsim("bundle build --model llama-3.1-8b --hardware A100-SXM-80GB --data " +
                  std::filesystem::temp_directory_path().string() + " --out " + UnusedOut());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--data: only --source kernel-db reads kernel tables"), std::string::npos)
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(UnusedOut()));
}

TEST(BundleBuildCli, AMissingTablesFolderIsNamed) {
  const auto r = RunFleetsim(
      "bundle build --source kernel-db --data /nonexistent-tables --model llama-3.1-8b "
      "--hardware H100-SXM --tp 1 --out " +
      UnusedOut());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("/nonexistent-tables/h100_sxm/"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("cannot open file"), std::string::npos) << r.err;
}

TEST(BundleBuildCli, AnUnknownSourceListsTheKnownOnes) {
  const auto r =
      RunFleetsim("bundle build --source measured --model llama-3.1-8b --hardware H100-SXM");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown source 'measured' (accepted: analytic, kernel-db)"),
            std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace fleetsim
