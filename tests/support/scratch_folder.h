// A fresh folder for each test, under the system's temporary folder and named after the
// test and the process (two checkouts may run the same test at once), removed when the
// test ends: for tests that run the fleetsim binary on files.
//
//   class RunCli : public testing::ScratchFolderTest {};
//   TEST_F(RunCli, Writes) { Write("c.yaml", "..."); RunFleetsim("run --cluster " +
//   Path("c.yaml")); }
#pragma once

#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include <gtest/gtest.h>

namespace fleetsim::testing {

class ScratchFolderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           ("fleetsim-" + std::string(test->test_suite_name()) + "-" + test->name() + "-" +
            std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  void Write(const std::string& name, const std::string& text) const {
    std::ofstream(dir_ / name) << text;
  }

  std::filesystem::path dir_;
};

}  // namespace fleetsim::testing
