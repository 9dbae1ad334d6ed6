#include "core/yaml_section.h"

#include <gtest/gtest.h>

#include "support/input_error.h"
#include "support/temp_file.h"

namespace fleetsim {
namespace {

using testing::CatchInputError;
using testing::Mentions;
using testing::TempFile;

TEST(YamlSection, ReadsTypedFieldsAndTreatsNullAsAbsent) {
  TempFile file("c.yaml", "a: 3\nb: hello\nc: null\nnested:\n  x: 1.5\nlist: [1, 2]\n");
  const YamlSection doc = LoadYamlFile(file.path());
  EXPECT_EQ(doc.Get<int>("a"), 3);
  EXPECT_EQ(doc.Get<std::string>("b"), "hello");
  EXPECT_FALSE(doc.Has("c"));
  EXPECT_EQ(doc.GetOr<int>("c", 7), 7);
  EXPECT_DOUBLE_EQ(doc.Child("nested").Get<double>("x"), 1.5);
  EXPECT_EQ(doc.GetList<int>("list"), (std::vector<int>{1, 2}));
}

TEST(YamlSection, ErrorsNameFileLineAndFieldPath) {
  TempFile file("c.yaml", "top: 1\nnested:\n  count: many\n");
  const YamlSection doc = LoadYamlFile(file.path());
  const InputError e = CatchInputError([&] { doc.Child("nested").Get<int>("count"); });
  EXPECT_EQ(e.file(), file.path());
  EXPECT_EQ(e.line(), 3);
  EXPECT_EQ(e.field(), "nested.count");
  EXPECT_TRUE(Mentions(e, "expected an integer, got 'many'"));
}

TEST(YamlSection, MissingFieldIsAnError) {
  TempFile file("c.yaml", "a: 1\n");
  const YamlSection doc = LoadYamlFile(file.path());
  EXPECT_THROW(doc.Get<int>("b"), InputError);
}

TEST(YamlSection, RejectsUnknownKeysListingTheAcceptedOnes) {
  TempFile file("c.yaml", "a: 1\ncolour: red\n");
  const YamlSection doc = LoadYamlFile(file.path());
  const InputError e = CatchInputError([&] { doc.RejectUnknownKeys({"a", "b"}); });
  EXPECT_EQ(e.line(), 2);
  EXPECT_EQ(e.field(), "colour");
  EXPECT_TRUE(Mentions(e, "accepted: a, b"));
}

TEST(YamlSection, SyntaxErrorCarriesItsLine) {
  TempFile file("c.json", "{\n  \"a\": 1,\n  \"b\": [1, 2\n}\n");
  const InputError e = CatchInputError([&] { LoadYamlFile(file.path()); });
  EXPECT_GT(e.line(), 1);
  EXPECT_TRUE(Mentions(e, "syntax error"));
}

TEST(YamlSection, MissingFileIsAnInputError) {
  EXPECT_THROW(LoadYamlFile("/nonexistent/fleetsim.yaml"), InputError);
}

// Found by the cluster_config fuzzer: a folder opens as a stream and failed only at
// yaml-cpp's first read, with an ios_failure that ended the program.
TEST(YamlSection, AFolderIsAnInputErrorNamingIt) {
  const std::string folder = ::testing::TempDir();
  const InputError e = CatchInputError([&] { LoadYamlFile(folder); });
  EXPECT_NE(std::string(e.what()).find("is a folder, not a file"), std::string::npos) << e.what();
}

// Issue 22: config.json was read leniently (YAML's 0x10, +1, 01, NaN; the first of two
// equal keys won silently).
TEST(YamlSection, JsonNumbersAreStrict) {
  for (const char* bad : {"0x10", "+1", "01", "NaN", ".nan", ".inf", "1.", ".5", "1e", "yes"}) {
    SCOPED_TRACE(bad);
    TempFile file("config.json", std::string("{\n  \"a\": 1,\n  \"b\": ") + bad + "\n}\n");
    const InputError e = CatchInputError([&] { LoadYamlFile(file.path()); });
    EXPECT_EQ(e.line(), 3) << e.what();
    EXPECT_EQ(e.field(), "b") << e.what();
  }
  TempFile good("config.json",
                "{\"a\": -0.5e-3, \"b\": 0, \"c\": 12E+2, \"d\": true, \"e\": null, "
                "\"f\": \"0x10\", \"g\": [1, 2.5]}\n");
  const YamlSection s = LoadYamlFile(good.path());
  EXPECT_EQ(s.Get<double>("c"), 1200);
  EXPECT_EQ(s.Get<std::string>("f"), "0x10");
  // YAML files keep YAML's scalars.
  TempFile yaml("c.yaml", "a: 0x10\n");
  EXPECT_EQ(LoadYamlFile(yaml.path()).Get<int>("a"), 16);
}

// Issue 22, fuzz finding fuzz/findings/generator_spec/non_scalar_key.yaml: a key that is a
// list or a mapping threw yaml-cpp's TypedBadConversion out of RejectUnknownKeys.
TEST(YamlSection, AKeyThatIsNoStringIsALocatedError) {
  const InputError finding = CatchInputError([] {
    LoadYamlFile(std::string(FLEETSIM_SOURCE_DIR) +
                 "/fuzz/findings/generator_spec/non_scalar_key.yaml");
  });
  EXPECT_EQ(finding.line(), 2) << finding.what();
  EXPECT_EQ(finding.field(), "generator") << finding.what();
  EXPECT_TRUE(Mentions(finding, "expected a key (a string), got a list")) << finding.what();
  TempFile top("c.yaml", "a: 1\n? {b: 2}\n: 3\n");
  const InputError e = CatchInputError([&] { LoadYamlFile(top.path()); });
  EXPECT_TRUE(Mentions(e, top.path() + ":2: expected a key (a string), got a mapping")) << e.what();
  TempFile json("c.json", "{\"a\": {\"b\": 1}}\n");
  EXPECT_NO_THROW(LoadYamlFile(json.path()));
}

TEST(YamlSection, DuplicateKeysAreRefusedAtTheSecond) {
  TempFile json("config.json", "{\n  \"n\": {\"a\": 1,\n  \"a\": 2}\n}\n");
  const InputError e = CatchInputError([&] { LoadYamlFile(json.path()); });
  EXPECT_EQ(e.line(), 3) << e.what();
  EXPECT_EQ(e.field(), "n.a") << e.what();
  TempFile yaml("c.yaml", "a: 1\nb: 2\na: 3\n");
  EXPECT_EQ(CatchInputError([&] { LoadYamlFile(yaml.path()); }).line(), 3);
}

}  // namespace
}  // namespace fleetsim
