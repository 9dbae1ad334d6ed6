#include "core/setting.h"

#include <cmath>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "support/input_error.h"
#include "support/temp_file.h"

namespace fleetsim {
namespace {

using testing::CatchInputError;
using testing::TempFile;

TEST(SettingRange, AdmitsExactlyItsInterval) {
  const SettingRange unit = SettingRange::UnitInterval();
  EXPECT_FALSE(unit.Admits(0));
  EXPECT_TRUE(unit.Admits(1e-9));
  EXPECT_TRUE(unit.Admits(1));
  EXPECT_FALSE(unit.Admits(1.0000001));
  EXPECT_FALSE(unit.Admits(std::nan("")));
  EXPECT_TRUE(SettingRange::NonNegative().Admits(0));
  EXPECT_FALSE(SettingRange::NonNegative().Admits(-1e-12));
  EXPECT_FALSE(SettingRange::Positive().Admits(0));
  EXPECT_TRUE(SettingRange::AtLeast(1).Admits(1));
  EXPECT_FALSE(SettingRange::AtLeast(1).Admits(0.999));
  EXPECT_TRUE(SettingRange::Any().Admits(-std::numeric_limits<double>::infinity()));
  EXPECT_FALSE(SettingRange::Any().Admits(std::nan("")));
}

TEST(SettingRange, SaysItsRuleForDocsAndErrors) {
  EXPECT_EQ(SettingRange::UnitInterval().Rule(), "in (0, 1]");
  EXPECT_EQ(SettingRange::UnitInterval().Requirement(), "must be in (0, 1]");
  EXPECT_EQ(SettingRange::Positive().Rule(), "> 0");
  EXPECT_EQ(SettingRange::Positive().Requirement(), "must be positive");
  EXPECT_EQ(SettingRange::NonNegative().Rule(), ">= 0");
  EXPECT_EQ(SettingRange::NonNegative().Requirement(), "must not be negative");
  EXPECT_EQ(SettingRange::AtLeast(1e-3).Rule(), ">= 0.001");
  EXPECT_EQ(SettingRange::AtLeast(1).Requirement(), "must be at least 1");
  EXPECT_EQ(SettingRange::Any().Rule(), "");
}

constexpr Setting<double> kRatio{{"overload_ratio", SettingType::kNumber, SettingRange::AtLeast(1),
                                  "", "", "A ratio", "(a ratio)"},
                                 1.5};
constexpr Setting<int> kCount{{"max_num_seqs", SettingType::kInteger, SettingRange::AtLeast(1),
                               "requests", "1024 or 256", "Running sequences"}};
constexpr Setting<std::string_view> kDtype{
    {"kv_cache_dtype", SettingType::kString, SettingRange::Any(), "", "", "A dtype"}, "auto"};

TEST(Setting, ReadsTheDefaultWhenAbsentAndChecksTheRangeWithItsLine) {
  TempFile file("c.yaml", "engine:\n  overload_ratio: 0.5\n  max_num_seqs: 8\n");
  const YamlSection engine = LoadYamlFile(file.path()).Child("engine");
  EXPECT_EQ(kCount.Find(engine), 8);
  EXPECT_EQ(kDtype.Read(engine), "auto");
  const InputError e = CatchInputError([&] { kRatio.Read(engine); });
  EXPECT_EQ(e.line(), 2);
  EXPECT_EQ(e.field(), "engine.overload_ratio");
  EXPECT_EQ(e.message(), "must be at least 1 (a ratio)");

  TempFile empty("d.yaml", "engine: {}\n");
  const YamlSection none = LoadYamlFile(empty.path()).Child("engine");
  EXPECT_EQ(kRatio.Read(none), 1.5);
  EXPECT_FALSE(kCount.Find(none).has_value());
  EXPECT_EQ(CatchInputError([&] { kCount.Get(none); }).field(), "engine.max_num_seqs");
}

TEST(Setting, CheckUsesTheCallersErrorSoEachEntryPointNamesItsOwnPlace) {
  const SettingError option = [](std::string_view key, const std::string& message) {
    return OptionError(OptionNameOf(key), message);
  };
  EXPECT_NO_THROW(kCount.Check(1, option));
  const InputError e = CatchInputError([&] { kCount.Check(0, option); });
  EXPECT_EQ(e.field(), "--max-num-seqs");
  EXPECT_EQ(e.message(), "must be at least 1");
}

TEST(Setting, DocsDefaultIsTheTextElseTheValueElseADash) {
  EXPECT_EQ(DocOf(kRatio).default_text, "1.5");
  EXPECT_EQ(DocOf(kCount).default_text, "1024 or 256");
  EXPECT_EQ(DocOf(kDtype).default_text, "auto");
  constexpr Setting<bool> kFlag{{"flag", SettingType::kBool, SettingRange::Any(), "", "", ""},
                                true};
  EXPECT_EQ(DocOf(kFlag).default_text, "true");
  constexpr Setting<int64_t> kBytes{
      {"kv_cache_memory_bytes", SettingType::kInteger, SettingRange::Positive(), "", "", ""}};
  EXPECT_EQ(DocOf(kBytes).default_text, "--");
  EXPECT_EQ(NameOf(SettingType::kMapping), "mapping");
}

}  // namespace
}  // namespace fleetsim
