// CsvReader: a header row, then records read by column name; every problem is an
// InputError naming the file, the line (the header is line 1) and the column.
#include "core/csv_reader.h"

#include <string>

#include <gtest/gtest.h>

#include "core/input_error.h"
#include "support/input_error.h"
#include "support/temp_file.h"

namespace fleetsim {
namespace {

using testing::CatchInputError;
using testing::Mentions;
using testing::TempFile;

TEST(CsvReader, ReadsRecordsByColumnNameInAnyHeaderOrder) {
  TempFile file("t.csv", "tokens,layer,time_us\n128,attn,1.5\n-3,mlp,2e3\n");
  CsvReader csv(file.path());
  EXPECT_EQ(csv.path(), file.path());
  EXPECT_EQ(csv.line(), 1);
  EXPECT_TRUE(csv.HasColumn("layer"));
  EXPECT_FALSE(csv.HasColumn("Layer"));  // names are exact
  csv.RequireColumns({"layer", "tokens", "time_us"});

  ASSERT_TRUE(csv.Next());
  EXPECT_EQ(csv.line(), 2);
  EXPECT_EQ(csv.Text("layer"), "attn");
  EXPECT_EQ(csv.Int("tokens"), 128);
  EXPECT_DOUBLE_EQ(csv.Number("time_us"), 1.5);
  ASSERT_TRUE(csv.Next());
  EXPECT_EQ(csv.line(), 3);
  EXPECT_EQ(csv.Text("layer"), "mlp");
  EXPECT_EQ(csv.Int("tokens"), -3);
  EXPECT_DOUBLE_EQ(csv.Number("time_us"), 2000.0);
  EXPECT_DOUBLE_EQ(csv.Number("tokens"), -3.0);  // an integer column reads as a number too
  EXPECT_FALSE(csv.Next());
  EXPECT_FALSE(csv.Next());
}

TEST(CsvReader, BlankLinesAreSkippedButCountedAndCrlfIsStripped) {
  TempFile file("t.csv", "a,b\r\n\r\n1,x\r\n\n\n2,y\r\n");
  CsvReader csv(file.path());
  ASSERT_TRUE(csv.Next());
  EXPECT_EQ(csv.line(), 3);
  EXPECT_EQ(csv.Text("b"), "x");  // no '\r' left on the last field
  ASSERT_TRUE(csv.Next());
  EXPECT_EQ(csv.line(), 6);
  EXPECT_EQ(csv.Int("a"), 2);
  EXPECT_EQ(csv.Text("b"), "y");
  EXPECT_FALSE(csv.Next());
}

TEST(CsvReader, ALastLineWithoutNewlineAndEmptyFieldsAreRead) {
  TempFile file("t.csv", "a,b,c\n,,\n1,,3");
  CsvReader csv(file.path());
  ASSERT_TRUE(csv.Next());
  EXPECT_EQ(csv.Text("a"), "");
  EXPECT_EQ(csv.Text("c"), "");
  ASSERT_TRUE(csv.Next());
  EXPECT_EQ(csv.line(), 3);
  EXPECT_EQ(csv.Int("c"), 3);
  EXPECT_EQ(csv.Text("b"), "");
  EXPECT_FALSE(csv.Next());
}

TEST(CsvReader, AMissingColumnIsNamedOnTheHeaderLine) {
  TempFile file("t.csv", "layer,tokens\nattn,1\n");
  CsvReader csv(file.path());
  csv.RequireColumns({"layer", "tokens"});
  const InputError e = CatchInputError([&] { csv.RequireColumns({"layer", "time_us"}); });
  EXPECT_EQ(e.file(), file.path());
  EXPECT_EQ(e.line(), 1);
  EXPECT_EQ(e.field(), "time_us");
  EXPECT_TRUE(Mentions(e, "missing column"));

  // Asking a record for a column the header lacks names the record's line.
  ASSERT_TRUE(csv.Next());
  const InputError absent = CatchInputError([&] { csv.Text("time_us"); });
  EXPECT_EQ(absent.line(), 2);
  EXPECT_EQ(absent.field(), "time_us");
}

TEST(CsvReader, ARecordWithTheWrongFieldCountIsRefusedWithItsLine) {
  for (const std::string& record : {std::string("1,2"), std::string("1,2,3,4")}) {
    SCOPED_TRACE(record);
    TempFile file("t.csv", "a,b,c\n1,2,3\n" + record + "\n");
    CsvReader csv(file.path());
    ASSERT_TRUE(csv.Next());
    const InputError e = CatchInputError([&] { csv.Next(); });
    EXPECT_EQ(e.file(), file.path());
    EXPECT_EQ(e.line(), 3);
    EXPECT_TRUE(Mentions(e, "the header has 3")) << e.what();
  }
}

// The reader splits on every comma and does not interpret quotes: a quoted field holding a
// comma is refused where it stands rather than read as one field.
TEST(CsvReader, AQuotedCommaIsRefusedNotReadAsOneField) {
  TempFile file("t.csv", "name,tokens\nplain,1\n\"a, b\",2\n");
  CsvReader csv(file.path());
  ASSERT_TRUE(csv.Next());
  const InputError e = CatchInputError([&] { csv.Next(); });
  EXPECT_EQ(e.line(), 3);
  EXPECT_TRUE(Mentions(e, "has 3 fields")) << e.what();
}

TEST(CsvReader, BadNumbersAreLocatedErrorsQuotingTheText) {
  TempFile file("t.csv", "n,x\n1,ok\n12x,1.5.2\n,inf\n1.5,nan\n 7,1e999\n");
  CsvReader csv(file.path());
  ASSERT_TRUE(csv.Next());
  ASSERT_TRUE(csv.Next());  // line 3
  InputError e = CatchInputError([&] { csv.Int("n"); });
  EXPECT_EQ(e.line(), 3);
  EXPECT_EQ(e.field(), "n");
  EXPECT_TRUE(Mentions(e, "'12x'")) << e.what();
  e = CatchInputError([&] { csv.Number("x"); });
  EXPECT_EQ(e.line(), 3);
  EXPECT_EQ(e.field(), "x");
  EXPECT_TRUE(Mentions(e, "'1.5.2'")) << e.what();

  ASSERT_TRUE(csv.Next());  // line 4: an empty field is no number; inf is not finite
  EXPECT_EQ(CatchInputError([&] { csv.Int("n"); }).line(), 4);
  EXPECT_EQ(CatchInputError([&] { csv.Number("n"); }).field(), "n");
  e = CatchInputError([&] { csv.Number("x"); });
  EXPECT_EQ(e.line(), 4);
  EXPECT_TRUE(Mentions(e, "finite")) << e.what();

  ASSERT_TRUE(csv.Next());  // line 5: 1.5 is no integer; nan is not finite
  e = CatchInputError([&] { csv.Int("n"); });
  EXPECT_EQ(e.line(), 5);
  EXPECT_TRUE(Mentions(e, "integer")) << e.what();
  EXPECT_DOUBLE_EQ(csv.Number("n"), 1.5);
  EXPECT_TRUE(Mentions(CatchInputError([&] { csv.Number("x"); }), "finite"));

  ASSERT_TRUE(csv.Next());  // line 6: a leading space is refused; an overflow is not finite
  EXPECT_EQ(CatchInputError([&] { csv.Int("n"); }).line(), 6);
  EXPECT_EQ(CatchInputError([&] { csv.Number("x"); }).line(), 6);
}

TEST(CsvReader, FailNamesTheCurrentLineAndColumn) {
  TempFile file("t.csv", "a\n1\n2\n");
  CsvReader csv(file.path());
  ASSERT_TRUE(csv.Next());
  ASSERT_TRUE(csv.Next());
  const InputError e = CatchInputError([&] { csv.Fail("a", "out of range"); });
  EXPECT_EQ(e.file(), file.path());
  EXPECT_EQ(e.line(), 3);
  EXPECT_EQ(e.field(), "a");
  EXPECT_EQ(e.message(), "out of range");
}

TEST(CsvReader, AnEmptyOrMissingFileIsAnInputError) {
  TempFile empty("empty.csv", "");
  InputError e = CatchInputError([&] { CsvReader csv(empty.path()); });
  EXPECT_EQ(e.file(), empty.path());
  EXPECT_EQ(e.line(), 1);
  EXPECT_TRUE(Mentions(e, "header")) << e.what();

  const std::string missing = empty.dir().string() + "/absent.csv";
  e = CatchInputError([&] { CsvReader csv(missing); });
  EXPECT_EQ(e.file(), missing);
  EXPECT_EQ(e.line(), 0);
  EXPECT_TRUE(Mentions(e, "cannot open")) << e.what();
}

TEST(CsvReader, AHeaderWithoutRecordsHasNone) {
  TempFile file("t.csv", "a,b\n");
  CsvReader csv(file.path());
  EXPECT_TRUE(csv.HasColumn("b"));
  EXPECT_FALSE(csv.Next());
}

}  // namespace
}  // namespace fleetsim
