#include "output/table_schema.h"

#include <cstdint>
#include <stdexcept>
#include <utility>

namespace fleetsim::output {

std::size_t ColumnBytes(const Column& column) {
  switch (column.type) {
    case ColumnType::kInt64:
      return sizeof(int64_t);
    case ColumnType::kInt32:
      return sizeof(int32_t);
    case ColumnType::kFloat64:
      return sizeof(double);
    case ColumnType::kString:
      return column.string_length;
  }
  throw std::invalid_argument("unknown column type");
}

TableSchema::TableSchema(std::size_t row_size) : row_size_(row_size) {
  if (row_size == 0) throw std::invalid_argument("TableSchema: row size must be positive");
}

TableSchema& TableSchema::Int64(std::string name, std::size_t offset, std::string unit) {
  return Add({std::move(name), ColumnType::kInt64, offset, 0, std::move(unit)});
}

TableSchema& TableSchema::Int32(std::string name, std::size_t offset, std::string unit) {
  return Add({std::move(name), ColumnType::kInt32, offset, 0, std::move(unit)});
}

TableSchema& TableSchema::Float64(std::string name, std::size_t offset, std::string unit) {
  return Add({std::move(name), ColumnType::kFloat64, offset, 0, std::move(unit)});
}

TableSchema& TableSchema::String(std::string name, std::size_t offset, std::size_t length) {
  if (length == 0)
    throw std::invalid_argument("TableSchema: string column '" + name + "' has length 0");
  return Add({std::move(name), ColumnType::kString, offset, length, "text"});
}

const Column* TableSchema::Find(const std::string& name) const {
  for (const Column& column : columns_) {
    if (column.name == name) return &column;
  }
  return nullptr;
}

TableSchema& TableSchema::Add(Column column) {
  if (column.name.empty()) throw std::invalid_argument("TableSchema: a column has no name");
  if (column.unit.empty())
    throw std::invalid_argument("TableSchema: column '" + column.name + "' has no unit");
  for (const Column& existing : columns_) {
    if (existing.name == column.name)
      throw std::invalid_argument("TableSchema: column '" + column.name + "' appears twice");
  }
  const std::size_t bytes = ColumnBytes(column);
  if (column.offset > row_size_ || bytes > row_size_ - column.offset) {
    throw std::invalid_argument("TableSchema: column '" + column.name + "' (offset " +
                                std::to_string(column.offset) + ", " + std::to_string(bytes) +
                                " bytes) does not fit in a row of " + std::to_string(row_size_) +
                                " bytes");
  }
  packed_row_size_ += bytes;
  columns_.push_back(std::move(column));
  return *this;
}

}  // namespace fleetsim::output
