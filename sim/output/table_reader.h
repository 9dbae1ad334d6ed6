// Reads a table of a run's file back (serial HDF5, no MPI) into rows laid out as the
// schema's struct, and writes tables as CSV -- for `fleetsim export --csv` and for tests
// that check what is on disk.
//
//   TableRows rows = ReadTable("run.h5", "/requests", RequestSchema());
//   WriteCsv(std::cout, RequestSchema(), rows);
#pragma once

#include <cstdint>
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

// True when `path` holds dataset `dataset`.
bool HasTable(const std::string& path, const std::string& dataset);
// Throws std::runtime_error when the file or dataset cannot be read.
TableRows ReadTable(const std::string& path, const std::string& dataset, const TableSchema& schema);
// A float attribute of a group or dataset; nullopt when the file, object or attribute is
// missing or not a number.
std::optional<double> ReadDoubleAttribute(const std::string& path, const std::string& object,
                                          const std::string& name);
// A header of column names, then one line per row; strings unquoted unless they hold a
// comma or a quote.
void WriteCsv(std::ostream& out, const TableSchema& schema, const TableRows& rows);

}  // namespace fleetsim::output
