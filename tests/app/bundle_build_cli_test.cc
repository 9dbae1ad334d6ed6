// `fleetsim bundle build` as a user runs it: the wrong combinations of options are one-line
// errors naming the option, with exit code 2.
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include <gtest/gtest.h>

#include "support/run_command.h"
#include "support/temp_file.h"

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

// The bundle replaces its --out folder whole, so a folder of other files is refused and
// left as it was; a bundle fleetsim built is rebuilt in place.
TEST(BundleBuildCli, OutMustBeNewEmptyOrABundleFleetsimBuilt) {
  testing::TempFile notes("notes.md", "mine\n");
  const std::string build = "bundle build --model llama-3.1-8b --hardware H100-SXM --tp 1 --out ";
  auto r = RunFleetsim(build + notes.dir().string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("holds files that are not a bundle fleetsim built"), std::string::npos)
      << r.err;
  EXPECT_TRUE(std::filesystem::exists(notes.path()));
  EXPECT_FALSE(std::filesystem::exists(notes.dir() / "meta.yaml"));

  r = RunFleetsim(build + notes.path());  // a file, not a folder
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("exists and is not a folder"), std::string::npos) << r.err;

  const std::filesystem::path bundle = notes.dir() / "bundle";
  ASSERT_EQ(RunFleetsim(build + bundle.string()).exit_code, 0);
  r = RunFleetsim("bundle build --model llama-3.1-8b --hardware H100-SXM --tp 1,2 --out " +
                  bundle.string());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::filesystem::exists(bundle / "tp2" / "dense.csv"));
}

// A TP the model cannot run fails before anything is left on disk, staging folder included.
TEST(BundleBuildCli, AFailedBuildLeavesNothingBehind) {
  testing::TempFile scratch("notes.md", "");
  const std::filesystem::path out = scratch.dir() / "b";
  const auto r = RunFleetsim("bundle build --model llama-3.1-8b --hardware H100-SXM --tp 3 --out " +
                             out.string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_FALSE(std::filesystem::exists(out));
  EXPECT_FALSE(std::filesystem::exists(out.string() + ".tmp"));
}

}  // namespace
}  // namespace fleetsim
