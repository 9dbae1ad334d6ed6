// The column layout of one output table: which members of a plain C++ row struct become
// which HDF5 compound members. Rows stay ordinary structs in the simulator; the schema
// says how to write them, so no row type needs to know about HDF5.
//
// Strings are fixed-length char arrays, NUL-padded in the file: Debian's parallel HDF5
// 1.10 cannot write variable-length strings collectively.
//
//   struct RequestRow { int64_t id; double ttft_s; char state[16]; };
//   TableSchema schema(sizeof(RequestRow));
//   schema.Int64("id", offsetof(RequestRow, id))
//       .Float64("ttft_s", offsetof(RequestRow, ttft_s))
//       .String("state", offsetof(RequestRow, state), sizeof(RequestRow::state));
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace fleetsim::output {

enum class ColumnType { kInt64, kInt32, kFloat64, kString };

struct Column {
  std::string name;
  ColumnType type;
  std::size_t offset;             // of the member in the C++ row struct
  std::size_t string_length = 0;  // kString only: the char array's length
};

// Bytes one column occupies, in the row struct and in the file.
std::size_t ColumnBytes(const Column& column);

class TableSchema {
 public:
  explicit TableSchema(std::size_t row_size);

  // Each adds a column, in file order. A column that would not fit in the row, a duplicate
  // or empty name, or a zero string length throws std::invalid_argument: these are
  // programming errors, caught the first time the schema is built.
  TableSchema& Int64(std::string name, std::size_t offset);
  TableSchema& Int32(std::string name, std::size_t offset);
  TableSchema& Float64(std::string name, std::size_t offset);
  TableSchema& String(std::string name, std::size_t offset, std::size_t length);

  std::size_t row_size() const { return row_size_; }
  const std::vector<Column>& columns() const { return columns_; }
  // Bytes of one row in the file: the columns back to back, without the struct's padding.
  std::size_t packed_row_size() const { return packed_row_size_; }

 private:
  TableSchema& Add(Column column);

  std::size_t row_size_;
  std::size_t packed_row_size_ = 0;
  std::vector<Column> columns_;
};

}  // namespace fleetsim::output
