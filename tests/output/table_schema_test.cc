// TableSchema's checks, and how rows are packed for the file (no padding, nothing after a
// string's NUL). Plain single-process logic, run on every rank like the rest.
#include "output/table_schema.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "output/internal/packed_rows.h"

namespace fleetsim::output {
namespace {

struct Row {
  int32_t count;  // 4 bytes of padding follow
  double value;
  char name[6];
};

TEST(TableSchema, ListsColumnsInTheOrderGiven) {
  TableSchema schema(sizeof(Row));
  schema.Int32("count", offsetof(Row, count), "requests")
      .Float64("value", offsetof(Row, value), "s")
      .String("name", offsetof(Row, name), sizeof(Row::name));
  ASSERT_EQ(schema.columns().size(), 3u);
  EXPECT_EQ(schema.columns()[0].name, "count");
  EXPECT_EQ(schema.columns()[2].type, ColumnType::kString);
  EXPECT_EQ(schema.columns()[2].string_length, 6u);
  EXPECT_EQ(schema.row_size(), sizeof(Row));
  EXPECT_EQ(schema.packed_row_size(), 4u + 8u + 6u);
}

TEST(TableSchema, RefusesColumnsThatCannotBeRight) {
  TableSchema schema(sizeof(Row));
  schema.Int32("count", offsetof(Row, count), "requests");
  EXPECT_THROW(schema.Int64("count", offsetof(Row, value), "s"), std::invalid_argument);  // twice
  EXPECT_THROW(schema.Int64("", offsetof(Row, value), "s"), std::invalid_argument);
  EXPECT_THROW(schema.String("name", offsetof(Row, name), 0), std::invalid_argument);
  EXPECT_THROW(schema.String("name", offsetof(Row, name), sizeof(Row)), std::invalid_argument);
  EXPECT_THROW(schema.Float64("late", sizeof(Row) - 4, "s"), std::invalid_argument);
  EXPECT_THROW(TableSchema(0), std::invalid_argument);
  EXPECT_EQ(schema.columns().size(), 1u);
}

TEST(PackedRows, DropPaddingAndWhateverFollowsAStringsNul) {
  TableSchema schema(sizeof(Row));
  schema.Int32("count", offsetof(Row, count), "requests")
      .Float64("value", offsetof(Row, value), "s")
      .String("name", offsetof(Row, name), sizeof(Row::name));
  Row rows[2];
  std::memset(rows, 0xCD, sizeof(rows));
  rows[0].count = 7;
  rows[0].value = 1.5;
  std::memcpy(rows[0].name, "ab", 3);  // "ab\0" then garbage
  rows[1].count = -1;
  rows[1].value = -0.0;
  std::memcpy(rows[1].name, "abcdef", 6);  // fills the array, no NUL

  const std::vector<unsigned char> packed = internal::PackRows(schema, rows, 2);
  ASSERT_EQ(packed.size(), 2u * 18u);
  int32_t count = 0;
  double value = 0;
  std::memcpy(&count, packed.data(), 4);
  std::memcpy(&value, packed.data() + 4, 8);
  EXPECT_EQ(count, 7);
  EXPECT_EQ(value, 1.5);
  const std::vector<unsigned char> name0(packed.begin() + 12, packed.begin() + 18);
  EXPECT_EQ(name0, (std::vector<unsigned char>{'a', 'b', 0, 0, 0, 0}));
  const std::vector<unsigned char> name1(packed.begin() + 30, packed.begin() + 36);
  EXPECT_EQ(name1, (std::vector<unsigned char>{'a', 'b', 'c', 'd', 'e', 'f'}));
  EXPECT_TRUE(internal::PackRows(schema, nullptr, 0).empty());
}

}  // namespace
}  // namespace fleetsim::output
