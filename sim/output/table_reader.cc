#include "output/table_reader.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
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

// Throws std::runtime_error naming the file when HDF5 cannot open it.
hid_t OpenFile(const std::string& path) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file < 0) throw std::runtime_error(path + ": cannot open as HDF5");
  return file;
}

hid_t OpenDataset(hid_t file, const std::string& path, const std::string& dataset) {
  const hid_t data = H5Dopen2(file, dataset.c_str(), H5P_DEFAULT);
  if (data < 0) throw std::runtime_error(path + ": no dataset " + dataset);
  return data;
}

// A table of a file, open for reading, with its row count.
struct OpenedTable {
  OpenedTable(const std::string& path, const std::string& dataset)
      : file(OpenFile(path), H5Fclose),
        data(OpenDataset(file.get(), path, dataset), H5Dclose),
        space(H5Dget_space(data.get()), H5Sclose) {
    hsize_t dims[1] = {0};
    H5Sget_simple_extent_dims(space.get(), dims, nullptr);
    rows = static_cast<int64_t>(dims[0]);
  }
  Id file;
  Id data;
  Id space;
  int64_t rows = 0;
};

// The schema's struct as an HDF5 memory type: members matched to the file's by name. A
// column the file lacks is left out (its bytes stay zero); a string keeps the file's
// character set (HDF5 converts no string between ASCII and UTF-8).
hid_t MemoryType(const TableSchema& schema, hid_t file_type) {
  const hid_t type = H5Tcreate(H5T_COMPOUND, schema.row_size());
  for (const Column& c : schema.columns()) {
    const int index = H5Tget_member_index(file_type, c.name.c_str());
    if (index < 0) continue;
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
        if (const hid_t stored = H5Tget_member_type(file_type, static_cast<unsigned>(index));
            stored >= 0) {
          H5Tset_cset(member, H5Tget_cset(stored));
          H5Tclose(stored);
        }
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
  TableRows all;
  ForEachRowBlock(path, dataset, schema, std::numeric_limits<int64_t>::max(),
                  [&](const TableRows& rows) { all = rows; });
  return all;
}

void ForEachRowBlock(const std::string& path, const std::string& dataset, const TableSchema& schema,
                     int64_t rows_per_block, const std::function<void(const TableRows&)>& block) {
  const OpenedTable table(path, dataset);
  const Id& data = table.data;
  const Id& space = table.space;
  const int64_t total = table.rows;
  const Id file_type(H5Dget_type(data.get()), H5Tclose);
  const Id type(MemoryType(schema, file_type.get()), H5Tclose);
  TableRows rows;
  if (total == 0) {
    block(rows);
    return;
  }
  for (int64_t first = 0; first < total;) {
    const int64_t count = std::min(rows_per_block, total - first);
    rows.count = count;
    rows.bytes.assign(static_cast<std::size_t>(count) * schema.row_size(), 0);
    const hsize_t start[1] = {static_cast<hsize_t>(first)};
    const hsize_t length[1] = {static_cast<hsize_t>(count)};
    const Id memory(H5Screate_simple(1, length, nullptr), H5Sclose);
    if (H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, start, nullptr, length, nullptr) < 0 ||
        H5Dread(data.get(), type.get(), memory.get(), space.get(), H5P_DEFAULT, rows.bytes.data()) <
            0) {
      throw std::runtime_error(path + ": cannot read " + dataset);
    }
    block(rows);
    first += count;
  }
}

std::vector<std::string> TableColumns(const std::string& path, const std::string& dataset) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  std::vector<std::string> names;
  const Id file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (file.get() < 0) return names;
  const Id data(H5Dopen2(file.get(), dataset.c_str(), H5P_DEFAULT), H5Dclose);
  if (data.get() < 0) return names;
  const Id type(H5Dget_type(data.get()), H5Tclose);
  const int count = H5Tget_nmembers(type.get());
  for (int i = 0; i < count; ++i) {
    char* name = H5Tget_member_name(type.get(), static_cast<unsigned>(i));
    names.emplace_back(name);
    H5free_memory(name);
  }
  return names;
}

namespace {

// The string an attribute or dataset of string type holds, fixed or variable length.
std::optional<std::string> ReadString(hid_t object, hid_t stored_type, bool attribute) {
  if (H5Tget_class(stored_type) != H5T_STRING) return std::nullopt;
  const Id type(H5Tcopy(stored_type), H5Tclose);
  auto read = [&](void* into) {
    return attribute ? H5Aread(object, type.get(), into)
                     : H5Dread(object, type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, into);
  };
  if (H5Tis_variable_str(stored_type) > 0) {
    char* text = nullptr;
    if (read(&text) < 0) return std::nullopt;
    std::string value = text == nullptr ? "" : text;
    H5free_memory(text);
    return value;
  }
  std::string value(H5Tget_size(stored_type), '\0');
  if (read(value.data()) < 0) return std::nullopt;
  value.resize(strnlen(value.data(), value.size()));
  return value;
}

}  // namespace

std::optional<std::string> ReadStringAttribute(const std::string& path, const std::string& object,
                                               const std::string& name) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  const Id file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (file.get() < 0) return std::nullopt;
  const Id attr(H5Aopen_by_name(file.get(), object.c_str(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT),
                H5Aclose);
  if (attr.get() < 0) return std::nullopt;
  const Id type(H5Aget_type(attr.get()), H5Tclose);
  return ReadString(attr.get(), type.get(), true);
}

std::vector<FrameColumn> ReadFrame(const std::string& path, const std::string& dataset) {
  const OpenedTable table(path, dataset);
  const Id& data = table.data;
  const auto rows = static_cast<std::size_t>(table.rows);
  const Id type(H5Dget_type(data.get()), H5Tclose);
  std::vector<FrameColumn> columns;
  const int count = H5Tget_nmembers(type.get());
  for (int i = 0; i < count; ++i) {
    const auto index = static_cast<unsigned>(i);
    char* name = H5Tget_member_name(type.get(), index);
    FrameColumn column;
    column.name = name;
    H5free_memory(name);
    const Id member(H5Tget_member_type(type.get(), index), H5Tclose);
    const H5T_class_t type_class = H5Tget_class(member.get());
    if (type_class != H5T_INTEGER && type_class != H5T_FLOAT && type_class != H5T_STRING)
      continue;  // nothing a table of ours holds
    column.text = type_class == H5T_STRING;
    // A compound of this one member: HDF5 picks it out of each row by name.
    const std::size_t width = column.text ? H5Tget_size(member.get()) : sizeof(double);
    const Id one(H5Tcreate(H5T_COMPOUND, width), H5Tclose);
    const Id value(column.text ? H5Tcopy(member.get()) : H5Tcopy(H5T_NATIVE_DOUBLE), H5Tclose);
    H5Tinsert(one.get(), column.name.c_str(), 0, value.get());
    std::vector<char> bytes(rows * width);
    if (rows > 0 && H5Dread(data.get(), one.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, bytes.data()) < 0)
      throw std::runtime_error(path + ": cannot read column " + column.name + " of " + dataset);
    for (std::size_t r = 0; r < rows; ++r) {
      const char* cell = bytes.data() + r * width;
      if (column.text) {
        column.texts.emplace_back(cell, strnlen(cell, width));
      } else {
        double number = 0;
        std::memcpy(&number, cell, sizeof number);
        column.numbers.push_back(number);
      }
    }
    columns.push_back(std::move(column));
  }
  // The units, one per member in file order, when the table has them.
  const Id units(H5Aopen(data.get(), "units", H5P_DEFAULT), H5Aclose);
  if (units.get() >= 0) {
    const Id units_space(H5Aget_space(units.get()), H5Sclose);
    hsize_t n[1] = {0};
    H5Sget_simple_extent_dims(units_space.get(), n, nullptr);
    const Id text(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(text.get(), H5T_VARIABLE);
    H5Tset_cset(text.get(), H5T_CSET_UTF8);
    std::vector<char*> values(n[0], nullptr);
    if (n[0] == static_cast<hsize_t>(count) &&
        H5Aread(units.get(), text.get(), values.data()) >= 0) {
      std::map<std::string, std::string> unit_of;
      for (int i = 0; i < count; ++i) {
        char* name = H5Tget_member_name(type.get(), static_cast<unsigned>(i));
        unit_of[name] =
            values[static_cast<std::size_t>(i)] ? values[static_cast<std::size_t>(i)] : "";
        H5free_memory(name);
      }
      for (FrameColumn& column : columns)
        column.unit = unit_of[column.name];
      H5Dvlen_reclaim(text.get(), units_space.get(), H5P_DEFAULT, values.data());
    }
  }
  return columns;
}

std::optional<std::string> ReadText(const std::string& path, const std::string& dataset) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  const Id file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (file.get() < 0) return std::nullopt;
  const Id data(H5Dopen2(file.get(), dataset.c_str(), H5P_DEFAULT), H5Dclose);
  if (data.get() < 0) return std::nullopt;
  const Id type(H5Dget_type(data.get()), H5Tclose);
  return ReadString(data.get(), type.get(), false);
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
