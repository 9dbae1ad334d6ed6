#include "output/table_reader.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include <hdf5.h>

#include "core/format.h"

namespace fleetsim::output {
namespace {

// Closes an HDF5 id on scope exit.
class Id {
 public:
  Id(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
  ~Id() {
    if (id_ >= 0) close_(id_);
  }
  Id(const Id&) = delete;
  Id& operator=(const Id&) = delete;
  hid_t get() const { return id_; }

 private:
  hid_t id_;
  herr_t (*close_)(hid_t);
};

// The schema's struct as an HDF5 memory type: members matched to the file by name.
hid_t MemoryType(const TableSchema& schema) {
  const hid_t type = H5Tcreate(H5T_COMPOUND, schema.row_size());
  for (const Column& c : schema.columns()) {
    hid_t member = -1;
    switch (c.type) {
      case ColumnType::kInt64:
        member = H5Tcopy(H5T_NATIVE_INT64);
        break;
      case ColumnType::kInt32:
        member = H5Tcopy(H5T_NATIVE_INT32);
        break;
      case ColumnType::kFloat64:
        member = H5Tcopy(H5T_NATIVE_DOUBLE);
        break;
      case ColumnType::kString:
        member = H5Tcopy(H5T_C_S1);
        H5Tset_size(member, c.string_length);
        H5Tset_strpad(member, H5T_STR_NULLPAD);
        break;
    }
    H5Tinsert(type, c.name.c_str(), c.offset, member);
    H5Tclose(member);
  }
  return type;
}

void WriteString(std::ostream& out, const char* data, std::size_t length) {
  const std::string text(data, strnlen(data, length));
  if (text.find_first_of(",\"\n") == std::string::npos) {
    out << text;
    return;
  }
  out << '"';
  for (char ch : text)
    out << (ch == '"' ? "\"\"" : std::string(1, ch));
  out << '"';
}

}  // namespace

bool HasTable(const std::string& path, const std::string& dataset) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  const Id file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (file.get() < 0) return false;
  return H5Lexists(file.get(), dataset.c_str(), H5P_DEFAULT) > 0;
}

TableRows ReadTable(const std::string& path, const std::string& dataset,
                    const TableSchema& schema) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  const Id file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (file.get() < 0) throw std::runtime_error(path + ": cannot open as HDF5");
  const Id data(H5Dopen2(file.get(), dataset.c_str(), H5P_DEFAULT), H5Dclose);
  if (data.get() < 0) throw std::runtime_error(path + ": no dataset " + dataset);
  const Id space(H5Dget_space(data.get()), H5Sclose);
  hsize_t dims[1] = {0};
  H5Sget_simple_extent_dims(space.get(), dims, nullptr);
  TableRows rows;
  rows.count = static_cast<int64_t>(dims[0]);
  rows.bytes.assign(static_cast<std::size_t>(dims[0]) * schema.row_size(), 0);
  const Id type(MemoryType(schema), H5Tclose);
  if (rows.count > 0 &&
      H5Dread(data.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, rows.bytes.data()) < 0) {
    throw std::runtime_error(path + ": cannot read " + dataset);
  }
  return rows;
}

void WriteCsv(std::ostream& out, const TableSchema& schema, const TableRows& rows) {
  const auto& columns = schema.columns();
  for (std::size_t i = 0; i < columns.size(); ++i)
    out << (i ? "," : "") << columns[i].name;
  out << '\n';
  for (int64_t r = 0; r < rows.count; ++r) {
    const unsigned char* row = rows.bytes.data() + static_cast<std::size_t>(r) * schema.row_size();
    for (std::size_t i = 0; i < columns.size(); ++i) {
      if (i) out << ',';
      const Column& c = columns[i];
      const unsigned char* field = row + c.offset;
      switch (c.type) {
        case ColumnType::kInt64: {
          int64_t v;
          std::memcpy(&v, field, sizeof v);
          out << v;
          break;
        }
        case ColumnType::kInt32: {
          int32_t v;
          std::memcpy(&v, field, sizeof v);
          out << v;
          break;
        }
        case ColumnType::kFloat64: {
          double v;
          std::memcpy(&v, field, sizeof v);
          if (std::isnan(v)) break;  // empty cell
          out << Significant(v, 17);
          break;
        }
        case ColumnType::kString:
          WriteString(out, reinterpret_cast<const char*>(field), c.string_length);
          break;
      }
    }
    out << '\n';
  }
}

std::optional<double> ReadDoubleAttribute(const std::string& path, const std::string& object,
                                          const std::string& name) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  const Id file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (file.get() < 0) return std::nullopt;
  const Id attr(H5Aopen_by_name(file.get(), object.c_str(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT),
                H5Aclose);
  double value = 0;
  if (attr.get() < 0 || H5Aread(attr.get(), H5T_NATIVE_DOUBLE, &value) < 0) return std::nullopt;
  return value;
}

}  // namespace fleetsim::output
