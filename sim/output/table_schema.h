// The column layout of one output table: which members of a plain C++ row struct become
// which HDF5 compound members. Rows stay ordinary structs in the simulator; the schema
// says how to write them, so no row type needs to know about HDF5.
//
// Every column has a unit, written to the file as the table's `units` attribute (one per
// column, in column order): "ns", "s", "tokens/s", "fraction", "text", ...
//
// Strings are fixed-length UTF-8 char arrays, NUL-padded in the file: Debian's parallel
// HDF5 1.10 cannot write variable-length strings collectively (and h5py returns bytes for
// strings inside a compound either way; docs/OUTPUT.md shows the reader).
//
//   struct RequestRow { int64_t id; double ttft_s; char state[16]; };
//   TableSchema schema(sizeof(RequestRow));
//   schema.Int64("id", offsetof(RequestRow, id), "index")
//       .Float64("ttft_s", offsetof(RequestRow, ttft_s), "s")
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
  std::string unit;               // "ns", "s", "tokens", "fraction", ...; "text" for strings
};

// Bytes one column occupies, in the row struct and in the file.
std::size_t ColumnBytes(const Column& column);

class TableSchema {
 public:
  explicit TableSchema(std::size_t row_size);

  // Each adds a column, in file order. A column that would not fit in the row, a duplicate
  // or empty name, an empty unit or a zero string length throws std::invalid_argument:
  // these are programming errors, caught the first time the schema is built.
  TableSchema& Int64(std::string name, std::size_t offset, std::string unit);
  TableSchema& Int32(std::string name, std::size_t offset, std::string unit);
  TableSchema& Float64(std::string name, std::size_t offset, std::string unit);
  // A string column's unit is "text".
  TableSchema& String(std::string name, std::size_t offset, std::size_t length);

  std::size_t row_size() const { return row_size_; }
  const std::vector<Column>& columns() const { return columns_; }
  // Bytes of one row in the file: the columns back to back, without the struct's padding.
  std::size_t packed_row_size() const { return packed_row_size_; }
  // The column named `name`, or nullptr.
  const Column* Find(const std::string& name) const;

 private:
  TableSchema& Add(Column column);

  std::size_t row_size_;
  std::size_t packed_row_size_ = 0;
  std::vector<Column> columns_;
};

}  // namespace fleetsim::output
