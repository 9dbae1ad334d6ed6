// InputError's one line: "file:line: field: message", each part only where it is known.
#include "core/input_error.h"

#include <string>

#include <gtest/gtest.h>

namespace fleetsim {
namespace {

TEST(InputError, OneLineNamesFileLineFieldAndMessage) {
  const InputError e("cfg.yaml", 12, "gateways.policy", "unknown policy 'x'");
  EXPECT_STREQ(e.what(), "cfg.yaml:12: gateways.policy: unknown policy 'x'");
  EXPECT_EQ(e.file(), "cfg.yaml");
  EXPECT_EQ(e.line(), 12);
  EXPECT_EQ(e.field(), "gateways.policy");
  EXPECT_EQ(e.message(), "unknown policy 'x'");
}

TEST(InputError, PartsThatAreNotKnownAreLeftOut) {
  EXPECT_STREQ(InputError("t.csv", 0, "", "cannot open file").what(), "t.csv: cannot open file");
  EXPECT_STREQ(InputError("t.csv", 3, "", "has 2 fields").what(), "t.csv:3: has 2 fields");
  EXPECT_STREQ(InputError("t.csv", 0, "tokens", "bad").what(), "t.csv: tokens: bad");
  EXPECT_STREQ(InputError("", 0, "--tp", "must be positive").what(), "--tp: must be positive");
  EXPECT_STREQ(InputError("", 0, "", "bare").what(), "bare");
}

TEST(InputError, AnOptionErrorNamesTheCommandLine) {
  const InputError e = OptionError("--hardware", "unknown hardware 'X'");
  EXPECT_STREQ(e.what(), "command line: --hardware: unknown hardware 'X'");
  EXPECT_EQ(e.line(), 0);
  EXPECT_EQ(e.field(), "--hardware");
  EXPECT_EQ(e.message(), "unknown hardware 'X'");
  EXPECT_EQ(kExitInputError, 2);
}

}  // namespace
}  // namespace fleetsim
