// Reads an output file back with HDF5's serial API (no MPI-IO), the way a user's
// h5py script would, so the tests check what is really on disk rather than what the
// writer believes it wrote.
//
//   ReadBack file(path);
//   EXPECT_EQ(file.RowCount("/requests"), 12);
//   std::vector<MyRow> rows = file.ReadRows<MyRow>("/requests", my_memory_type);
//   EXPECT_EQ(file.StringAttribute("/", "fleetsim_version"), "0.1.0");
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <hdf5.h>

#include "output/internal/hdf5_handle.h"

namespace fleetsim::output::testing {

// One member of a dataset's compound type, as stored in the file.
struct StoredMember {
  std::string name;
  H5T_class_t type_class;
  std::size_t size;
  H5T_str_t string_pad;  // strings only
  H5T_cset_t cset;       // strings only
};

class ReadBack {
 public:
  explicit ReadBack(const std::string& path);  // throws std::runtime_error

  int64_t RowCount(const std::string& dataset) const;
  std::vector<StoredMember> Members(const std::string& dataset) const;
  // Every row, converted by HDF5 into `memory_type` (compound members match by name).
  template <typename Row>
  std::vector<Row> ReadRows(const std::string& dataset, hid_t memory_type) const {
    std::vector<Row> rows(static_cast<std::size_t>(RowCount(dataset)));
    Read(dataset, memory_type, rows.data());
    return rows;
  }
  // The rows' bytes exactly as stored (read with the file's own type).
  std::vector<unsigned char> RawBytes(const std::string& dataset) const;

  // A scalar string dataset (Hdf5File::WriteText) with all of its stored bytes.
  std::string Text(const std::string& dataset) const;
  // A string attribute with all of its stored bytes (size included).
  std::string StringAttribute(const std::string& object, const std::string& name) const;
  int64_t Int64Attribute(const std::string& object, const std::string& name) const;
  // A 1-D attribute of variable-length strings (a table's `units`).
  std::vector<std::string> StringListAttribute(const std::string& object,
                                               const std::string& name) const;
  // The dataset's filters (H5Z ids, in pipeline order) and its chunk length in rows (0
  // when not chunked).
  std::vector<int> Filters(const std::string& dataset) const;
  int64_t ChunkRows(const std::string& dataset) const;
  double Float64Attribute(const std::string& object, const std::string& name) const;

 private:
  void Read(const std::string& dataset, hid_t memory_type, void* into) const;
  internal::Hdf5Handle OpenDataset(const std::string& dataset) const;
  void ReadAttribute(const std::string& object, const std::string& name, hid_t memory_type,
                     void* into) const;

  std::string path_;
  internal::Hdf5Handle file_;
};

}  // namespace fleetsim::output::testing
