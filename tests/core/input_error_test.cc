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

// Issue 22: an error repeated the offending value verbatim -- raw CR bytes and megabytes.
TEST(InputError, QuotedInputIsShortAndPrintable) {
  EXPECT_EQ(QuoteInput("80GB"), "'80GB'");
  EXPECT_EQ(QuoteInput("a\rb\n\t\x01"), "'a\\rb\\n\\t\\x01'");
  const std::string huge(3'000'000, 'x');
  const std::string quoted = QuoteInput(huge);
  EXPECT_LE(quoted.size(), kMaxQuotedInput + 40);
  EXPECT_NE(quoted.find("... (3000000 bytes)"), std::string::npos) << quoted;
}

// A path longer than a quoted value may be is still quoted whole: cut, it named another
// file (a test's scratch path with its process id was cut in "no such file").
TEST(InputError, APathIsQuotedWholeAndPrintable) {
  const std::string path = "/tmp/" + std::string(200, 'd') + "/config.json";
  EXPECT_EQ(QuotePath(path), "'" + path + "'");
  EXPECT_EQ(QuotePath("a\rb"), "'a\\rb'");
  EXPECT_EQ(QuotePath("a\nb"), "'a\\nb'");
  const std::string quoted = QuotePath(std::string(3'000'000, 'p'));
  EXPECT_LE(quoted.size(), kMaxQuotedPath + 40);
  EXPECT_NE(quoted.find("... (3000000 bytes)"), std::string::npos);
}

TEST(InputError, AnErrorLineIsOneShortLineWhateverTheMessage) {
  const InputError e("t.csv", 2, "x", "got '" + std::string(3'000'000, 'y') + "\r'");
  const std::string text = e.what();
  EXPECT_LE(text.size(), kMaxErrorText + 40);
  EXPECT_EQ(text.find('\r'), std::string::npos);
  EXPECT_EQ(InputError("t.csv", 2, "x", "a\rb").what(), std::string("t.csv:2: x: a\\rb"));
}

TEST(InputError, ACommandLineTimeIsRangeChecked) {
  EXPECT_EQ(OptionSimTime("--horizon", 30), 30 * kNsPerSecond);
  EXPECT_EQ(OptionSimTime("--horizon", 1e9), kMaxSimTime);
  for (double bad : {-1.0, 1e10, 1e300}) {
    try {
      OptionSimTime("--horizon", bad);
      ADD_FAILURE() << bad;
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("command line: --horizon: must", 0), 0u) << e.what();
    }
  }
}

}  // namespace
}  // namespace fleetsim
