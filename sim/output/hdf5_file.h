// The one HDF5 file of a run, written collectively by all MPI ranks: tables of fixed-size
// rows (compound datasets, see table_schema.h) and attributes. The file appears under its
// final name only when Commit() succeeds; until then it is "<final_path>.tmp", and a run
// that fails before Commit() removes it, so nothing incomplete looks like a result.
// A file system that fails under the run (full, read-only, no permission) is an error of
// the output: fleetsim::InputError naming the final path and what failed, on every rank;
// the temporary file is then emptied before HDF5 closes it (so the close can flush on a
// full disk) and removed.
//
// Every member function is collective: each rank of `comm` calls it, in the same order,
// with the same path, schema and total. An error on one rank is agreed on, so every rank
// throws the same std::runtime_error instead of some ranks waiting forever.
//
//   const RowRange range = RowRangeOf(static_cast<int64_t>(rows.size()), MPI_COMM_WORLD);
//   Hdf5File file("out/run.h5", MPI_COMM_WORLD);
//   file.WriteTable("/requests", schema, rows.data(), range.offset,
//                   static_cast<int64_t>(rows.size()), range.total);
//   file.WriteAttribute("/", "fleetsim_version", std::string("0.1.0"));
//   file.WriteText("/provenance", "cluster_config", text);  // any size
//   file.Commit();  // now out/run.h5 exists, complete
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <mpi.h>

#include "output/internal/collective_step.h"
#include "output/internal/hdf5_handle.h"
#include "output/table_schema.h"

namespace fleetsim::output {

class Hdf5File {
 public:
  // Creates "<final_path>.tmp" with the MPI-IO driver (comm may be MPI_COMM_WORLD or of
  // size 1). A missing or unwritable directory, or a file HDF5 cannot create, throws
  // fleetsim::InputError naming --output.
  Hdf5File(const std::string& final_path, MPI_Comm comm);
  // Without Commit(): closes and removes the temporary file. Collective, like the rest.
  ~Hdf5File();
  Hdf5File(const Hdf5File&) = delete;
  Hdf5File& operator=(const Hdf5File&) = delete;

  // Creates dataset `path` ("/requests", "/summary/fleet"; missing groups are created) of
  // `total_rows` rows, chunked and compressed (shuffle + deflate), with attribute `units`:
  // each column's unit, in column order. This rank writes rows [row_offset, row_offset + row_count)
  // from `rows` (row_count * schema.row_size() bytes) with collective MPI-IO. A rank may write no
  // rows; the table may have none. The ranks' ranges must cover the table exactly once in count
  // (sum of row_count == total_rows), else std::invalid_argument.
  void WriteTable(const std::string& path, const TableSchema& schema, const void* rows,
                  int64_t row_offset, int64_t row_count, int64_t total_rows);

  // An attribute on a group or dataset; a missing group is created. Same value on every
  // rank. A string is stored fixed-length, exactly value.size() bytes (at least 1).
  // Writing an existing attribute again replaces it.
  void WriteAttribute(const std::string& object_path, const std::string& name,
                      const std::string& value);
  void WriteAttribute(const std::string& object_path, const std::string& name, int64_t value);
  void WriteAttribute(const std::string& object_path, const std::string& name, double value);
  // A list of strings, stored as a 1-D array of variable-length UTF-8 strings (h5py reads
  // them as str). Used for a table's `units`.
  void WriteAttribute(const std::string& object_path, const std::string& name,
                      const std::vector<std::string>& values);

  // A text of any size as dataset `group_path`/`name`: a scalar of a fixed-length string
  // type exactly text.size() bytes long (at least 1, NUL-padded). An attribute lives in
  // its object's header, and HDF5 refuses a header message over 64 KiB. Same text on
  // every rank; a missing group is created.
  void WriteText(const std::string& group_path, const std::string& name, const std::string& text);

  // Flushes and closes the file, then renames it to the final path. When it returns on
  // any rank, the final file exists for every rank.
  void Commit();

  const std::string& final_path() const { return final_path_; }
  const std::string& temporary_path() const { return temporary_path_; }

 private:
  // `predefined_type` is copied; a string_size > 0 makes the copy that long, NUL-padded.
  void WriteScalarAttribute(const std::string& object_path, const std::string& name,
                            hid_t predefined_type, std::size_t string_size, const void* value);
  // Creates each missing group along `path` ("/a/b" -> "/a", "/a/b").
  void CreateGroups(const std::string& path);
  void RequireOpen(const char* operation) const;
  // RunCollectiveStep, with a failure (HDF5's or MPI-IO's: a full disk, a read-only file
  // system) rethrown as fleetsim::InputError naming the final path and `what` failed.
  void WriteStep(const std::string& what, const std::function<void()>& step);

  std::string final_path_;
  std::string temporary_path_;
  internal::DuplicatedComm comm_;  // our messages never meet the caller's
  internal::Hdf5Handle file_;      // declared after comm_: closed before it is freed
  bool committed_ = false;
};

}  // namespace fleetsim::output
