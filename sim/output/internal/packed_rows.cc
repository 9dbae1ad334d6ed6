#include "output/internal/packed_rows.h"

#include <cstring>
#include <stdexcept>

namespace fleetsim::output::internal {
namespace {

Hdf5Handle MemberType(const Column& column, const std::string& file) {
  auto copy = [&](hid_t predefined) {
    return CheckedId(H5Tcopy(predefined), H5Tclose, file, "H5Tcopy for column " + column.name);
  };
  switch (column.type) {
    case ColumnType::kInt64:
      return copy(H5T_NATIVE_INT64);
    case ColumnType::kInt32:
      return copy(H5T_NATIVE_INT32);
    case ColumnType::kFloat64:
      return copy(H5T_NATIVE_DOUBLE);
    case ColumnType::kString: {
      Hdf5Handle type = copy(H5T_C_S1);
      const std::string call = "string type of column " + column.name;
      CheckStatus(H5Tset_size(type.get(), column.string_length), file, call);
      CheckStatus(H5Tset_strpad(type.get(), H5T_STR_NULLPAD), file, call);
      CheckStatus(H5Tset_cset(type.get(), H5T_CSET_UTF8), file, call);
      return type;
    }
  }
  throw std::invalid_argument("column " + column.name + " has an unknown type");
}

}  // namespace

Hdf5Handle PackedRowType(const TableSchema& schema, const std::string& file) {
  Hdf5Handle row = CheckedId(H5Tcreate(H5T_COMPOUND, schema.packed_row_size()), H5Tclose, file,
                             "H5Tcreate compound");
  std::size_t offset = 0;
  for (const Column& column : schema.columns()) {
    const Hdf5Handle member = MemberType(column, file);
    CheckStatus(H5Tinsert(row.get(), column.name.c_str(), offset, member.get()), file,
                "H5Tinsert column " + column.name);
    offset += ColumnBytes(column);
  }
  return row;
}

std::vector<unsigned char> PackRows(const TableSchema& schema, const void* rows,
                                    std::size_t row_count) {
  const std::size_t packed_size = schema.packed_row_size();
  std::vector<unsigned char> packed(row_count * packed_size, 0);
  const auto* source = static_cast<const unsigned char*>(rows);
  for (std::size_t row = 0; row < row_count; ++row) {
    const unsigned char* from = source + row * schema.row_size();
    unsigned char* to = packed.data() + row * packed_size;
    for (const Column& column : schema.columns()) {
      const unsigned char* member = from + column.offset;
      std::size_t bytes = ColumnBytes(column);
      // Whatever follows a string's NUL (snprintf leaves it untouched) is not data:
      // copy up to the NUL and leave the rest as the zeros already there.
      if (column.type == ColumnType::kString) {
        const void* nul = std::memchr(member, '\0', bytes);
        if (nul != nullptr)
          bytes = static_cast<std::size_t>(static_cast<const unsigned char*>(nul) - member);
      }
      std::memcpy(to, member, bytes);
      to += ColumnBytes(column);
    }
  }
  return packed;
}

}  // namespace fleetsim::output::internal
