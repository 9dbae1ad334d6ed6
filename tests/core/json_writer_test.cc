#include "core/json_writer.h"

#include <sstream>

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

namespace fleetsim {
namespace {

TEST(JsonWriter, NestsObjectsAndArraysWithCommas) {
  std::ostringstream out;
  {
    JsonWriter json(out);
    json.BeginObject();
    json.Field("name", "qwen");
    json.Key("shape");
    json.BeginArray();
    json.Value(3);
    json.Value(int64_t{10240});
    json.EndArray();
    json.Key("inner");
    json.BeginObject();
    json.Field("ok", true);
    json.Key("none");
    json.Null();
    json.EndObject();
    json.Key("empty");
    json.BeginArray();
    json.EndArray();
    json.Field("ratio", 0.5);
    json.EndObject();
  }
  // yaml-cpp parses JSON: a well-formed document round-trips.
  const YAML::Node doc = YAML::Load(out.str());
  EXPECT_EQ(doc["name"].as<std::string>(), "qwen");
  EXPECT_EQ(doc["shape"][1].as<int64_t>(), 10240);
  EXPECT_TRUE(doc["inner"]["ok"].as<bool>());
  EXPECT_TRUE(doc["inner"]["none"].IsNull());
  EXPECT_EQ(doc["empty"].size(), 0u);
  EXPECT_DOUBLE_EQ(doc["ratio"].as<double>(), 0.5);
  EXPECT_NE(out.str().find("\"shape\": [\n    3,\n    10240\n  ]"), std::string::npos) << out.str();
}

TEST(JsonWriter, EscapesStrings) {
  std::ostringstream out;
  {
    JsonWriter json(out);
    json.Value("a \"quoted\" \\ line\n");
  }
  EXPECT_EQ(out.str(), "\"a \\\"quoted\\\" \\\\ line\\n\"\n");
}

}  // namespace
}  // namespace fleetsim
