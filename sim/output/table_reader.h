// Reads a table of a run's file back (serial HDF5, no MPI) into rows laid out as the
// schema's struct, and writes tables as CSV -- for `fleetsim export --csv` and for tests
// that check what is on disk.
//
//   TableRows rows = ReadTable("run.h5", "/requests", RequestSchema());
//   WriteCsv(std::cout, RequestSchema(), rows);
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "output/table_schema.h"

namespace fleetsim::output {

struct TableRows {
  int64_t count = 0;
  std::vector<unsigned char> bytes;  // count x schema.row_size()
  template <typename Row>
  const Row& at(int64_t i) const {
    return *reinterpret_cast<const Row*>(bytes.data() + static_cast<std::size_t>(i) * sizeof(Row));
  }
};

// One column of a table read without knowing its schema: numbers (any integer or float
// member, as double) or text.
struct FrameColumn {
  std::string name;
  std::string unit;  // from the table's `units` attribute; "" when it has none
  bool text = false;
  std::vector<double> numbers;
  std::vector<std::string> texts;
};

// Every column of a compound table, in file order, whatever its columns are (a sweep's
// table, a column added later). Throws std::runtime_error when it cannot be read.
std::vector<FrameColumn> ReadFrame(const std::string& path, const std::string& dataset);

// True when `path` holds dataset `dataset`.
bool HasTable(const std::string& path, const std::string& dataset);
// Throws std::runtime_error when the file or dataset cannot be read. Columns are matched
// by name: a column of the file the schema lacks is skipped, one the file lacks reads as
// zero bytes (TableColumns says which the file has).
TableRows ReadTable(const std::string& path, const std::string& dataset, const TableSchema& schema);
// The same rows, at most `rows_per_block` at a time and in order, so that a table larger
// than memory can be summarised.
void ForEachRowBlock(const std::string& path, const std::string& dataset, const TableSchema& schema,
                     int64_t rows_per_block, const std::function<void(const TableRows&)>& block);
// The names of a table's columns, in file order (empty when the dataset is missing).
std::vector<std::string> TableColumns(const std::string& path, const std::string& dataset);
// A string attribute (fixed-length or variable-length), or the text of a scalar string
// dataset (Hdf5File::WriteText), without its NUL padding; nullopt when missing.
std::optional<std::string> ReadStringAttribute(const std::string& path, const std::string& object,
                                               const std::string& name);
std::optional<std::string> ReadText(const std::string& path, const std::string& dataset);
// A float attribute of a group or dataset; nullopt when the file, object or attribute is
// missing or not a number.
std::optional<double> ReadDoubleAttribute(const std::string& path, const std::string& object,
                                          const std::string& name);
// A header of column names, then one line per row; strings unquoted unless they hold a
// comma or a quote.
void WriteCsv(std::ostream& out, const TableSchema& schema, const TableRows& rows);

}  // namespace fleetsim::output
