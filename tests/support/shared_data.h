// Access to the third-party data beside the project (../shared/data). Tests read it in
// place; when it is absent they skip with a message -- except under CI (CI=true), where a
// missing data set is a failure, not a silent skip.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

namespace fleetsim::testing {

inline std::filesystem::path SharedDataDir() {
  return std::filesystem::path(FLEETSIM_SOURCE_DIR) / ".." / "shared" / "data";
}

inline bool RunningInCi() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::string(ci) == "true";
}

}  // namespace fleetsim::testing

// Use at the top of a test that needs ../shared/data.
#define FLEETSIM_REQUIRE_SHARED_DATA()                                                \
  do {                                                                                \
    if (!std::filesystem::exists(::fleetsim::testing::SharedDataDir())) {             \
      if (::fleetsim::testing::RunningInCi()) {                                       \
        FAIL() << "../shared/data is missing, and CI=true forbids skipping";          \
      }                                                                               \
      GTEST_SKIP() << "../shared/data is absent: skipping (CI=true would fail here)"; \
    }                                                                                 \
  } while (false)
