#include "core/format.h"

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

}  // namespace
}  // namespace fleetsim
