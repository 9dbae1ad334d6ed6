#include "core/json_object.h"

#include <gtest/gtest.h>

namespace fleetsim {
namespace {

JsonObject Parsed(std::string_view text) {
  JsonObject row;
  std::string error;
  EXPECT_TRUE(row.Parse(text, error)) << text << ": " << error;
  return row;
}

std::string ErrorOf(std::string_view text) {
  JsonObject row;
  std::string error;
  EXPECT_FALSE(row.Parse(text, error)) << text;
  return error;
}

TEST(JsonObject, ReadsTheTopLevelFieldsAndConvertsOnlyWhatIsAsked) {
  const std::string line =
      R"({"timestamp": 27482, "input_length": 6955, "output_length": 52, "hash_ids": [46, 47, 0],)"
      R"( "nested": {"a": [1, {"b": null}], "c": "x"}, "f": -1.5e3, "ok": true, "none": null})";
  const JsonObject row = Parsed(line);
  int64_t n = 0;
  ASSERT_NE(row.Find("input_length"), nullptr);
  EXPECT_TRUE(row.Find("input_length")->ToInt64(n));
  EXPECT_EQ(n, 6955);
  std::vector<uint64_t> ids;
  EXPECT_TRUE(row.Find("hash_ids")->ToUint64List(ids));
  EXPECT_EQ(ids, (std::vector<uint64_t>{46, 47, 0}));
  double f = 0;
  EXPECT_TRUE(row.Find("f")->ToDouble(f));
  EXPECT_EQ(f, -1500.0);
  EXPECT_FALSE(row.Find("f")->ToInt64(n));  // a fraction or exponent is not an integer
  EXPECT_EQ(row.Find("nested")->kind, JsonValue::Kind::kObject);
  EXPECT_EQ(row.Find("nested")->raw, R"({"a": [1, {"b": null}], "c": "x"})");
  EXPECT_TRUE(row.Find("none")->is_null());
  EXPECT_EQ(row.Find("a"), nullptr);  // only top-level keys are fields
  EXPECT_EQ(row.Find("missing"), nullptr);
  std::string text;
  EXPECT_TRUE(row.Find("ok")->ToText(text));
  EXPECT_EQ(text, "true");
}

TEST(JsonObject, TypesAreKeptApart) {
  const JsonObject row = Parsed(R"({"quoted": "12", "negative": -3, "big": 18446744073709551615,)"
                                R"( "over": 18446744073709551616, "list": [1, -2], "empty": []})");
  int64_t i = 0;
  uint64_t u = 0;
  double d = 0;
  EXPECT_FALSE(row.Find("quoted")->ToInt64(i));  // a string is not a number
  EXPECT_FALSE(row.Find("quoted")->ToDouble(d));
  EXPECT_TRUE(row.Find("negative")->ToInt64(i));
  EXPECT_FALSE(row.Find("negative")->ToUint64(u));
  EXPECT_TRUE(row.Find("big")->ToUint64(u));
  EXPECT_EQ(u, 18446744073709551615ULL);
  EXPECT_FALSE(row.Find("big")->ToInt64(i));  // out of range
  EXPECT_FALSE(row.Find("over")->ToUint64(u));
  std::vector<uint64_t> list{7};
  EXPECT_FALSE(row.Find("list")->ToUint64List(list));
  EXPECT_TRUE(row.Find("empty")->ToUint64List(list));
  EXPECT_TRUE(list.empty());
  std::vector<uint64_t> not_a_list;
  EXPECT_FALSE(row.Find("negative")->ToUint64List(not_a_list));
}

TEST(JsonObject, UnescapesStrings) {
  const JsonObject row =
      Parsed(R"({"id": "a\"b\\c\/d\n\t\b\f\r\u00e9\ud83d\ude00", "k\u0031": 1})");
  std::string text;
  EXPECT_TRUE(row.Find("id")->ToText(text));
  EXPECT_EQ(text, "a\"b\\c/d\n\t\b\f\r\xC3\xA9\xF0\x9F\x98\x80");
  EXPECT_NE(row.Find("k1"), nullptr);
}

TEST(JsonObject, RejectsWhatIsNotOneJsonObjectAndSaysWhere) {
  EXPECT_EQ(ErrorOf("[1, 2]"), "not a JSON object");
  EXPECT_EQ(ErrorOf("timestamp: 1"), "not a JSON object");
  EXPECT_EQ(ErrorOf(R"({"a": 1,})"), "not a JSON object: expected '\"' at column 9");
  EXPECT_EQ(ErrorOf(R"({"a" 1})"), "not a JSON object: expected ':' at column 6");
  EXPECT_EQ(ErrorOf(R"({"a": 01})"), "not a JSON object: expected a JSON value at column 8");
  EXPECT_EQ(ErrorOf(R"({"a": [1, 2})"), "not a JSON object: expected ',' or ']' at column 12");
  EXPECT_EQ(ErrorOf(R"({"a": 1} x)"),
            "not a JSON object: expected the end of the line after the "
            "object at column 10");
  EXPECT_EQ(ErrorOf(R"({"a": "x)"),
            "not a JSON object: expected the string's closing '\"' at "
            "column 9");
  EXPECT_EQ(ErrorOf(R"({"a": "\q"})"), "not a JSON object: expected a valid escape at column 10");
  EXPECT_EQ(ErrorOf(R"({"a": tru})"), "not a JSON object: expected a JSON value at column 7");
  EXPECT_EQ(ErrorOf(R"({"a": 1, "a": 2})"), "not a JSON object: the key 'a' is there twice");
  EXPECT_EQ(ErrorOf(R"({"a": 1.})"), "not a JSON object: expected a JSON value at column 9");
  EXPECT_EQ(ErrorOf(std::string(100, '[')), "not a JSON object");
  EXPECT_NE(ErrorOf("{\"a\": " + std::string(100, '[') + std::string(100, ']') + "}")
                .find("less nesting"),
            std::string::npos);
  Parsed("  {}  ");
  Parsed("{\"a\":{\"b\":[[],{}]}}\r");
}

}  // namespace
}  // namespace fleetsim
