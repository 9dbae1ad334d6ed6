#include "core/format.h"

#include <string>

#include <gtest/gtest.h>

namespace fleetsim {
namespace {

TEST(Format, GroupsThousands) {
  EXPECT_EQ(WithCommas(0), "0");
  EXPECT_EQ(WithCommas(999), "999");
  EXPECT_EQ(WithCommas(1000), "1,000");
  EXPECT_EQ(WithCommas(153944064), "153,944,064");
  EXPECT_EQ(WithCommas(-1234567), "-1,234,567");
}

TEST(Format, ScalesBytesInBothUnitSystems) {
  EXPECT_EQ(DecimalBytes(153944064), "153.9 MB");
  EXPECT_EQ(BinaryBytes(153944064), "146.8 MiB");
  EXPECT_EQ(BinaryBytes(60LL << 30), "60.0 GiB");
  EXPECT_EQ(BinaryBytes(512), "512 B");
}

TEST(Format, FixedAndSignificantFollowPrintf) {
  EXPECT_EQ(Fixed(2.0 / 3, 4), "0.6667");
  EXPECT_EQ(Fixed(2.5, 0), "2");  // round half to even, as printf
  EXPECT_EQ(Significant(57.0123, 4), "57.01");
  EXPECT_EQ(Significant(1e-6), "1e-06");
  EXPECT_EQ(Significant(1234567.0), "1.23457e+06");
}

TEST(Format, ShortestNumberReadsBackExactly) {
  EXPECT_EQ(ShortestNumber(0.05), "0.05");
  EXPECT_EQ(ShortestNumber(1e-3), "0.001");
  EXPECT_EQ(ShortestNumber(500.0), "500");
  EXPECT_EQ(ShortestNumber(2.0), "2");
  EXPECT_EQ(ShortestNumber(0.1 + 0.2), "0.30000000000000004");
  for (double v : {1.0 / 3, 6.02214076e23, -2.5e-300})
    EXPECT_EQ(std::stod(ShortestNumber(v)), v);
}

TEST(Format, HexAndPrintfOfAnyLength) {
  EXPECT_EQ(Hex64(255), "00000000000000ff");
  EXPECT_EQ(Hex64(~0ULL), "ffffffffffffffff");
  EXPECT_EQ(Printf("%s-%03d", "a", 7), "a-007");
  const std::string long_text(5000, 'x');
  EXPECT_EQ(Printf("[%s]", long_text.c_str()), "[" + long_text + "]");
  EXPECT_EQ(Printf("%s", ""), "");
}

}  // namespace
}  // namespace fleetsim
