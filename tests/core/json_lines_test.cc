// JsonLines: a JSON-lines file one object at a time, with the line number in every error;
// blank lines skipped, a byte-order mark on the first line ignored, null read as missing.
#include "core/json_lines.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/input_error.h"
#include "support/input_error.h"
#include "support/temp_file.h"

namespace fleetsim {
namespace {

using testing::CatchInputError;
using testing::Mentions;
using testing::TempFile;

TEST(JsonLines, ReadsObjectsInOrderSkippingBlankLinesButCountingThem) {
  TempFile file("t.jsonl",
                "\xEF\xBB\xBF{\"n\": 1, \"x\": 2.5, \"s\": \"a\"}\n"
                "\n   \t\r\n"
                "{\"n\": -7, \"x\": 3, \"s\": 12}\r\n"
                "{\"n\": 0}");
  JsonLines lines(file.path());
  EXPECT_EQ(lines.path(), file.path());
  ASSERT_TRUE(lines.Next());  // the byte-order mark does not break the first object
  EXPECT_EQ(lines.line(), 1);
  EXPECT_EQ(lines.Int("n"), 1);
  EXPECT_DOUBLE_EQ(lines.Number("x"), 2.5);
  EXPECT_EQ(lines.OptionalText("s"), "a");
  ASSERT_TRUE(lines.Next());
  EXPECT_EQ(lines.line(), 4);
  EXPECT_EQ(lines.Int("n"), -7);
  EXPECT_DOUBLE_EQ(lines.Number("x"), 3.0);  // an integer is a number
  EXPECT_EQ(lines.OptionalText("s"), "12");  // a number's digits as text
  ASSERT_TRUE(lines.Next());                 // no newline after the last line
  EXPECT_EQ(lines.line(), 5);
  EXPECT_FALSE(lines.Has("x"));
  EXPECT_FALSE(lines.Next());
}

TEST(JsonLines, NullIsMissingAndRequiredFieldsNameThemselves) {
  TempFile file("t.jsonl", "{\"a\": 1}\n{\"a\": null, \"b\": 2}\n");
  JsonLines lines(file.path());
  ASSERT_TRUE(lines.Next());
  ASSERT_TRUE(lines.Next());
  EXPECT_FALSE(lines.Has("a"));
  EXPECT_TRUE(lines.Has("b"));
  EXPECT_EQ(lines.OptionalText("a"), std::nullopt);
  EXPECT_EQ(lines.OptionalUint64List("a"), std::nullopt);
  const InputError e = CatchInputError([&] { lines.Int("a"); });
  EXPECT_EQ(e.file(), file.path());
  EXPECT_EQ(e.line(), 2);
  EXPECT_EQ(e.field(), "a");
  EXPECT_TRUE(Mentions(e, "missing")) << e.what();
  EXPECT_EQ(CatchInputError([&] { lines.Number("c"); }).field(), "c");
}

TEST(JsonLines, WrongTypesAreLocatedErrors) {
  TempFile file("t.jsonl",
                "{\"a\": 0}\n"
                "{\"i\": 1.5, \"d\": \"x\", \"t\": [1], \"l\": [1, -2], \"m\": [1, 2, 3]}\n");
  JsonLines lines(file.path());
  ASSERT_TRUE(lines.Next());
  ASSERT_TRUE(lines.Next());
  InputError e = CatchInputError([&] { lines.Int("i"); });
  EXPECT_EQ(e.line(), 2);
  EXPECT_EQ(e.field(), "i");
  EXPECT_TRUE(Mentions(e, "integer")) << e.what();
  EXPECT_DOUBLE_EQ(lines.Number("i"), 1.5);
  e = CatchInputError([&] { lines.Number("d"); });
  EXPECT_EQ(e.line(), 2);
  EXPECT_EQ(e.field(), "d");
  EXPECT_TRUE(Mentions(e, "number")) << e.what();
  EXPECT_EQ(CatchInputError([&] { lines.OptionalText("t"); }).field(), "t");
  e = CatchInputError([&] { lines.OptionalUint64List("l"); });
  EXPECT_EQ(e.field(), "l");
  EXPECT_TRUE(Mentions(e, "non-negative")) << e.what();
  EXPECT_EQ(lines.OptionalUint64List("m"), (std::vector<uint64_t>{1, 2, 3}));
}

TEST(JsonLines, ALineThatIsNotOneObjectIsRefusedWithItsLine) {
  for (const std::string& bad : {std::string("[1, 2]"), std::string("{\"a\": 1"),
                                 std::string("{\"a\": 1} {}"), std::string("not json")}) {
    SCOPED_TRACE(bad);
    TempFile file("t.jsonl", "{\"a\": 1}\n\n" + bad + "\n{\"a\": 2}\n");
    JsonLines lines(file.path());
    ASSERT_TRUE(lines.Next());
    const InputError e = CatchInputError([&] { lines.Next(); });
    EXPECT_EQ(e.file(), file.path());
    EXPECT_EQ(e.line(), 3);
  }
}

TEST(JsonLines, AByteOrderMarkIsOnlySkippedOnTheFirstLine) {
  TempFile file("t.jsonl", "{\"a\": 1}\n\xEF\xBB\xBF{\"a\": 2}\n");
  JsonLines lines(file.path());
  ASSERT_TRUE(lines.Next());
  EXPECT_EQ(CatchInputError([&] { lines.Next(); }).line(), 2);
}

TEST(JsonLines, FailAndAMissingFile) {
  TempFile file("t.jsonl", "{\"a\": 1}\n");
  JsonLines lines(file.path());
  ASSERT_TRUE(lines.Next());
  const InputError e = CatchInputError([&] { lines.Fail("a", "too large"); });
  EXPECT_EQ(e.line(), 1);
  EXPECT_EQ(e.field(), "a");
  EXPECT_EQ(e.message(), "too large");

  const std::string missing = file.dir().string() + "/absent.jsonl";
  const InputError absent = CatchInputError([&] { JsonLines none(missing); });
  EXPECT_EQ(absent.file(), missing);
  EXPECT_EQ(absent.line(), 0);
  EXPECT_TRUE(Mentions(absent, "cannot open")) << absent.what();
}

TEST(JsonLines, AnEmptyFileHasNoObjects) {
  TempFile file("t.jsonl", "\n\n");
  JsonLines lines(file.path());
  EXPECT_FALSE(lines.Next());
}

}  // namespace
}  // namespace fleetsim
