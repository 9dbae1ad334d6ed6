#include "output/hdf5_file.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <stdexcept>
#include <sys/stat.h>
#include <system_error>
#include <unistd.h>
#include <vector>

#include "core/input_error.h"
#include "output/internal/packed_rows.h"

namespace fleetsim::output {
namespace {

namespace fs = std::filesystem;
using internal::CheckedExists;
using internal::CheckedId;
using internal::CheckMpi;
using internal::CheckStatus;
using internal::Hdf5Handle;
using internal::RunCollectiveStep;

// Why `path` cannot be created as an output file, judged before HDF5 tries (so the user
// sees the option to fix, not an MPI-IO error code); empty when it looks creatable.
std::string OutputPathProblem(const std::string& path) {
  if (path.empty()) return "the path is empty";
  std::error_code error;
  if (fs::is_directory(path, error)) return path + " is a directory";
  const fs::path parent = fs::path(path).parent_path();
  if (parent.empty() || fs::is_directory(parent, error)) {
    // The temporary file is created, then renamed, in this folder: both need it writable
    // (a read-only file system says EROFS here even to root).
    const std::string folder = parent.empty() ? "." : parent.string();
    if (::access(folder.c_str(), W_OK | X_OK) != 0)
      return "folder " + folder + ": " + std::strerror(errno);
    return "";
  }
  if (fs::exists(parent, error)) return parent.string() + " is not a directory";
  return "directory " + parent.string() + " does not exist";
}

// Room the file's metadata may still need beyond the bytes written so far: object headers
// (where attributes live), group and heap blocks. A run file's own are a few KiB.
constexpr off_t kMetadataRoom = off_t{256} << 10;

// Makes the file system give `path` room for its final metadata flush now (fallocate,
// keeping the size), so that the flush cannot meet a full disk: HDF5 1.10 cannot close a
// file whose flush failed ("slist already enabled?"), and crashes when MPI_Finalize then
// shuts it down. A file system without fallocate is left as it is. Throws
// std::runtime_error with the system's reason.
void ReserveRoom(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error(std::string("open: ") + std::strerror(errno));
  struct stat status = {};
  int failed = ::fstat(fd, &status) != 0 ? errno : 0;
  if (failed == 0 && ::fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, status.st_size + kMetadataRoom) != 0)
    failed = errno;
  ::close(fd);
  if (failed != 0 && failed != EOPNOTSUPP && failed != ENOSYS)
    throw std::runtime_error(std::string("fallocate: ") + std::strerror(failed));
}

// Gives back the room ReserveRoom took past the end of the finished file: only a change of
// size frees blocks allocated beyond it.
void ReleaseRoom(const std::string& path) {
  std::error_code error;
  const std::uintmax_t size = fs::file_size(path, error);
  if (error) return;
  fs::resize_file(path, size + 1, error);
  if (!error) fs::resize_file(path, size, error);
}

// Frees what the discarded file holds on disk, so that HDF5's close, which still writes
// its metadata, finds room on a full disk (a close that fails leaves HDF5 holding the file
// half-freed, and it crashes when MPI_Finalize shuts it down).
void EmptyDiscardedFile(const std::string& path) {
  std::error_code ignored;
  if (fs::exists(path, ignored)) fs::resize_file(path, 0, ignored);
}

// Creation properties without modification times: HDF5 stamps each object with the wall
// clock by default, and two identical runs would then differ byte for byte.
Hdf5Handle UntimedCreation(hid_t property_class, const std::string& file) {
  Hdf5Handle properties = CheckedId(H5Pcreate(property_class), H5Pclose, file, "H5Pcreate");
  CheckStatus(H5Pset_obj_track_times(properties.get(), false), file, "H5Pset_obj_track_times");
  return properties;
}

// Rows per chunk: about 1 MiB of packed rows, at most the table. Chunks let HDF5 compress
// and let a reader take a slice without reading the whole table.
constexpr std::size_t kChunkBytes = std::size_t{1} << 20;

// A chunked layout with shuffle + deflate (zlib, level 4: most of level 9's gain on these
// tables at a fraction of its time). Parallel HDF5 (1.10.2 and later) writes filtered
// datasets only collectively, which every write here is.
void Compress(hid_t creation, const TableSchema& schema, int64_t total_rows,
              const std::string& file) {
  const auto rows = static_cast<hsize_t>(total_rows);
  const hsize_t chunk[1] = {std::clamp<hsize_t>(kChunkBytes / schema.packed_row_size(), 1, rows)};
  CheckStatus(H5Pset_chunk(creation, 1, chunk), file, "H5Pset_chunk");
  CheckStatus(H5Pset_shuffle(creation), file, "H5Pset_shuffle");
  CheckStatus(H5Pset_deflate(creation, 4), file, "H5Pset_deflate");
}

void CheckObjectPath(const std::string& path, bool root_allowed) {
  const bool absolute = !path.empty() && path.front() == '/';
  const bool is_root = path == "/";
  if (!absolute || (is_root && !root_allowed) || (!is_root && path.back() == '/') ||
      path.find("//") != std::string::npos) {
    throw std::invalid_argument("Hdf5File: bad object path '" + path + "' (want /group/name)");
  }
}

// Agrees on WriteTable's row arguments before anything collective starts: a rank with a
// bad range, ranks that disagree on the total, or counts that do not add up to it throw
// std::invalid_argument on every rank.
void CheckRowRanges(MPI_Comm comm, const std::string& path, const void* rows, int64_t row_offset,
                    int64_t row_count, int64_t total_rows) {
  const bool bad = row_offset < 0 || row_count < 0 || total_rows < 0 ||
                   row_offset > total_rows - row_count || (row_count > 0 && rows == nullptr);
  const int64_t local_max[3] = {bad ? 1 : 0, total_rows, -total_rows};
  int64_t max[3] = {0, 0, 0};
  CheckMpi(MPI_Allreduce(local_max, max, 3, MPI_INT64_T, MPI_MAX, comm), "MPI_Allreduce");
  const int64_t counted = bad ? 0 : row_count;
  int64_t written = 0;
  CheckMpi(MPI_Allreduce(&counted, &written, 1, MPI_INT64_T, MPI_SUM, comm), "MPI_Allreduce");
  const std::string where = "Hdf5File::WriteTable " + path + ": ";
  if (max[0] != 0) throw std::invalid_argument(where + "a rank's rows fall outside the table");
  if (max[1] != -max[2]) throw std::invalid_argument(where + "ranks disagree on the total rows");
  if (written != total_rows) {
    throw std::invalid_argument(where + "ranks write " + std::to_string(written) +
                                " rows but the table has " + std::to_string(total_rows));
  }
}

// The file and memory dataspaces of this rank's rows: [offset, offset + count).
void SelectRows(Hdf5Handle& file_space, Hdf5Handle& memory_space, int64_t offset, int64_t count,
                const std::string& file) {
  // A rank without rows still takes part in the collective write: its memory dataspace
  // has room for one row, and nothing selected.
  const hsize_t memory_rows[1] = {static_cast<hsize_t>(std::max<int64_t>(count, 1))};
  memory_space =
      CheckedId(H5Screate_simple(1, memory_rows, nullptr), H5Sclose, file, "H5Screate_simple");
  if (count == 0) {
    CheckStatus(H5Sselect_none(file_space.get()), file, "H5Sselect_none");
    CheckStatus(H5Sselect_none(memory_space.get()), file, "H5Sselect_none");
    return;
  }
  const hsize_t start[1] = {static_cast<hsize_t>(offset)};
  CheckStatus(
      H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start, nullptr, memory_rows, nullptr),
      file, "H5Sselect_hyperslab");
}

}  // namespace

Hdf5File::Hdf5File(const std::string& final_path, MPI_Comm comm)
    : final_path_(final_path), temporary_path_(final_path + ".tmp"), comm_(comm) {
  internal::SilenceHdf5ErrorPrinting();
  // Rank 0 alone looks at the file system, so every rank gives the same answer.
  const std::string problem = internal::BroadcastText(
      comm_.rank() == 0 ? OutputPathProblem(final_path) : std::string(), 0, comm_.get());
  if (!problem.empty())
    throw OptionError("--output", "cannot create " + final_path + ": " + problem);
  try {
    WriteStep("creating the file", [&] {
      const Hdf5Handle access =
          CheckedId(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, temporary_path_, "H5Pcreate");
      CheckStatus(H5Pset_fapl_mpio(access.get(), comm_.get(), MPI_INFO_NULL), temporary_path_,
                  "H5Pset_fapl_mpio");
      file_ =
          CheckedId(H5Fcreate(temporary_path_.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, access.get()),
                    H5Fclose, temporary_path_, "H5Fcreate");
    });
  } catch (const InputError& error) {
    // Some ranks may have created the file: leave nothing behind.
    file_.Close();
    std::error_code ignored;
    if (comm_.rank() == 0) fs::remove(temporary_path_, ignored);
    throw OptionError("--output", "cannot create " + final_path + ": " + error.message());
  }
}

Hdf5File::~Hdf5File() {
  if (committed_) return;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  if (comm_.rank() == 0) EmptyDiscardedFile(temporary_path_);
  MPI_Barrier(comm_.get());  // emptied before any rank's close writes metadata into it
  file_.Close();             // a file being discarded: a failing close changes nothing
  std::error_code ignored;
  if (comm_.rank() == 0) fs::remove(temporary_path_, ignored);
  // No rank may see the temporary file as still there once its destructor returned.
  MPI_Barrier(comm_.get());
}

void Hdf5File::WriteTable(const std::string& path, const TableSchema& schema, const void* rows,
                          int64_t row_offset, int64_t row_count, int64_t total_rows) {
  RequireOpen("WriteTable");
  CheckObjectPath(path, /*root_allowed=*/false);
  if (schema.columns().empty())
    throw std::invalid_argument("Hdf5File::WriteTable " + path + ": the schema has no columns");
  CheckRowRanges(comm_.get(), path, rows, row_offset, row_count, total_rows);

  Hdf5Handle type, dataset, file_space, memory_space;
  std::vector<unsigned char> packed;
  WriteStep("creating " + path, [&] {
    CreateGroups(path.substr(0, path.rfind('/')));
    type = internal::PackedRowType(schema, temporary_path_);
    const hsize_t dims[1] = {static_cast<hsize_t>(total_rows)};
    file_space = CheckedId(H5Screate_simple(1, dims, nullptr), H5Sclose, temporary_path_,
                           "H5Screate_simple");
    const Hdf5Handle creation = UntimedCreation(H5P_DATASET_CREATE, temporary_path_);
    // Every row is written below, so HDF5 need not write fill values first.
    CheckStatus(H5Pset_fill_time(creation.get(), H5D_FILL_TIME_NEVER), temporary_path_,
                "H5Pset_fill_time");
    if (total_rows > 0) Compress(creation.get(), schema, total_rows, temporary_path_);
    dataset = CheckedId(H5Dcreate2(file_.get(), path.c_str(), type.get(), file_space.get(),
                                   H5P_DEFAULT, creation.get(), H5P_DEFAULT),
                        H5Dclose, temporary_path_, "H5Dcreate2 " + path);
    SelectRows(file_space, memory_space, row_offset, row_count, temporary_path_);
    packed = internal::PackRows(schema, rows, static_cast<std::size_t>(row_count));
  });
  std::vector<std::string> units;
  for (const Column& column : schema.columns())
    units.push_back(column.unit);
  WriteAttribute(path, "units", units);
  if (total_rows == 0) return;  // the same on every rank: nobody enters the write

  WriteStep("writing " + path, [&] {
    const Hdf5Handle transfer =
        CheckedId(H5Pcreate(H5P_DATASET_XFER), H5Pclose, temporary_path_, "H5Pcreate");
    CheckStatus(H5Pset_dxpl_mpio(transfer.get(), H5FD_MPIO_COLLECTIVE), temporary_path_,
                "H5Pset_dxpl_mpio");
    static const unsigned char kNoRows = 0;  // H5Dwrite wants a buffer even for no rows
    const void* data = packed.empty() ? &kNoRows : packed.data();
    CheckStatus(H5Dwrite(dataset.get(), type.get(), memory_space.get(), file_space.get(),
                         transfer.get(), data),
                temporary_path_, "H5Dwrite " + path);
  });
}

void Hdf5File::WriteAttribute(const std::string& object_path, const std::string& name,
                              const std::string& value) {
  // HDF5 has no zero-length string type: an empty value is stored as one NUL.
  static const char kEmpty[1] = {'\0'};
  WriteScalarAttribute(object_path, name, H5T_C_S1, std::max<std::size_t>(value.size(), 1),
                       value.empty() ? kEmpty : value.data());
}

void Hdf5File::WriteAttribute(const std::string& object_path, const std::string& name,
                              int64_t value) {
  WriteScalarAttribute(object_path, name, H5T_NATIVE_INT64, 0, &value);
}

void Hdf5File::WriteAttribute(const std::string& object_path, const std::string& name,
                              double value) {
  WriteScalarAttribute(object_path, name, H5T_NATIVE_DOUBLE, 0, &value);
}

void Hdf5File::WriteAttribute(const std::string& object_path, const std::string& name,
                              const std::vector<std::string>& values) {
  RequireOpen("WriteAttribute");
  CheckObjectPath(object_path, /*root_allowed=*/true);
  if (name.empty())
    throw std::invalid_argument("Hdf5File: an attribute on " + object_path + " has no name");
  const std::string what = "attribute " + object_path + " " + name;
  std::vector<const char*> pointers;
  for (const std::string& value : values)
    pointers.push_back(value.c_str());
  WriteStep("writing " + what, [&] {
    const Hdf5Handle type =
        CheckedId(H5Tcopy(H5T_C_S1), H5Tclose, temporary_path_, "H5Tcopy " + what);
    CheckStatus(H5Tset_size(type.get(), H5T_VARIABLE), temporary_path_, "H5Tset_size " + what);
    CheckStatus(H5Tset_cset(type.get(), H5T_CSET_UTF8), temporary_path_, "H5Tset_cset " + what);
    CreateGroups(object_path);
    const Hdf5Handle object = CheckedId(H5Oopen(file_.get(), object_path.c_str(), H5P_DEFAULT),
                                        H5Oclose, temporary_path_, "H5Oopen " + object_path);
    if (CheckedExists(H5Aexists(object.get(), name.c_str()), temporary_path_, "H5Aexists " + what))
      CheckStatus(H5Adelete(object.get(), name.c_str()), temporary_path_, "H5Adelete " + what);
    const hsize_t count[1] = {static_cast<hsize_t>(values.size())};
    const Hdf5Handle space = CheckedId(H5Screate_simple(1, count, nullptr), H5Sclose,
                                       temporary_path_, "H5Screate_simple");
    const Hdf5Handle attribute = CheckedId(
        H5Acreate2(object.get(), name.c_str(), type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT),
        H5Aclose, temporary_path_, "H5Acreate2 " + what);
    if (!pointers.empty()) {
      CheckStatus(H5Awrite(attribute.get(), type.get(), pointers.data()), temporary_path_,
                  "H5Awrite " + what);
    }
  });
}

void Hdf5File::WriteScalarAttribute(const std::string& object_path, const std::string& name,
                                    hid_t predefined_type, std::size_t string_size,
                                    const void* value) {
  RequireOpen("WriteAttribute");
  CheckObjectPath(object_path, /*root_allowed=*/true);
  if (name.empty())
    throw std::invalid_argument("Hdf5File: an attribute on " + object_path + " has no name");
  const std::string what = "attribute " + object_path + " " + name;
  WriteStep("writing " + what, [&] {
    const Hdf5Handle type =
        CheckedId(H5Tcopy(predefined_type), H5Tclose, temporary_path_, "H5Tcopy " + what);
    if (string_size > 0) {
      CheckStatus(H5Tset_size(type.get(), string_size), temporary_path_, "H5Tset_size " + what);
      CheckStatus(H5Tset_strpad(type.get(), H5T_STR_NULLPAD), temporary_path_,
                  "H5Tset_strpad " + what);
    }
    CreateGroups(object_path);
    const Hdf5Handle object = CheckedId(H5Oopen(file_.get(), object_path.c_str(), H5P_DEFAULT),
                                        H5Oclose, temporary_path_, "H5Oopen " + object_path);
    if (CheckedExists(H5Aexists(object.get(), name.c_str()), temporary_path_, "H5Aexists " + what))
      CheckStatus(H5Adelete(object.get(), name.c_str()), temporary_path_, "H5Adelete " + what);
    const Hdf5Handle space =
        CheckedId(H5Screate(H5S_SCALAR), H5Sclose, temporary_path_, "H5Screate");
    const Hdf5Handle attribute = CheckedId(
        H5Acreate2(object.get(), name.c_str(), type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT),
        H5Aclose, temporary_path_, "H5Acreate2 " + what);
    CheckStatus(H5Awrite(attribute.get(), type.get(), value), temporary_path_, "H5Awrite " + what);
  });
}

void Hdf5File::WriteText(const std::string& group_path, const std::string& name,
                         const std::string& text) {
  RequireOpen("WriteText");
  CheckObjectPath(group_path, /*root_allowed=*/true);
  if (name.empty() || name.find('/') != std::string::npos)
    throw std::invalid_argument("Hdf5File: bad text name '" + name + "' on " + group_path);
  const std::string path = (group_path == "/" ? "" : group_path) + "/" + name;
  // HDF5 has no zero-length string type: an empty text is stored as one NUL.
  static const char kEmpty[1] = {'\0'};
  const void* data = text.empty() ? kEmpty : text.data();
  Hdf5Handle type, space, dataset;
  WriteStep("creating " + path, [&] {
    CreateGroups(group_path);
    type = CheckedId(H5Tcopy(H5T_C_S1), H5Tclose, temporary_path_, "H5Tcopy " + path);
    CheckStatus(H5Tset_size(type.get(), std::max<std::size_t>(text.size(), 1)), temporary_path_,
                "H5Tset_size " + path);
    CheckStatus(H5Tset_strpad(type.get(), H5T_STR_NULLPAD), temporary_path_,
                "H5Tset_strpad " + path);
    space = CheckedId(H5Screate(H5S_SCALAR), H5Sclose, temporary_path_, "H5Screate");
    const Hdf5Handle creation = UntimedCreation(H5P_DATASET_CREATE, temporary_path_);
    CheckStatus(H5Pset_fill_time(creation.get(), H5D_FILL_TIME_NEVER), temporary_path_,
                "H5Pset_fill_time");
    dataset = CheckedId(H5Dcreate2(file_.get(), path.c_str(), type.get(), space.get(), H5P_DEFAULT,
                                   creation.get(), H5P_DEFAULT),
                        H5Dclose, temporary_path_, "H5Dcreate2 " + path);
  });
  WriteStep("writing " + path, [&] {
    // Every rank writes the same bytes, collectively, as for a table.
    const Hdf5Handle transfer =
        CheckedId(H5Pcreate(H5P_DATASET_XFER), H5Pclose, temporary_path_, "H5Pcreate");
    CheckStatus(H5Pset_dxpl_mpio(transfer.get(), H5FD_MPIO_COLLECTIVE), temporary_path_,
                "H5Pset_dxpl_mpio");
    CheckStatus(H5Dwrite(dataset.get(), type.get(), H5S_ALL, H5S_ALL, transfer.get(), data),
                temporary_path_, "H5Dwrite " + path);
  });
}

void Hdf5File::Commit() {
  RequireOpen("Commit");
  // With room for the metadata reserved, the flush below writes only into space the file
  // owns. Failing here leaves the file open: the destructor empties it, so that its close
  // can write its metadata, and removes it.
  WriteStep("reserving room for the metadata", [&] {
    if (comm_.rank() == 0) ReserveRoom(temporary_path_);
  });
  WriteStep("flushing the file", [&] {
    if (H5Fflush(file_.get(), H5F_SCOPE_GLOBAL) < 0)
      internal::ThrowHdf5Failure(temporary_path_, "H5Fflush");
  });
  WriteStep("closing the file", [&] {
    if (!file_.Close()) internal::ThrowHdf5Failure(temporary_path_, "H5Fclose");
  });
  std::string problem;
  if (comm_.rank() == 0) {
    ReleaseRoom(temporary_path_);
    std::error_code error;
    fs::rename(temporary_path_, final_path_, error);
    if (error) problem = "cannot rename " + temporary_path_ + " to it: " + error.message();
  }
  // The broadcast is the barrier: no rank returns before rank 0 has renamed the file.
  problem = internal::BroadcastText(problem, 0, comm_.get());
  if (!problem.empty()) throw InputError(final_path_, 0, "", problem);
  committed_ = true;
}

void Hdf5File::CreateGroups(const std::string& path) {
  const Hdf5Handle creation = UntimedCreation(H5P_GROUP_CREATE, temporary_path_);
  for (std::size_t end = path.find('/', 1);; end = path.find('/', end + 1)) {
    const std::string prefix = path.substr(0, end);
    if (prefix.empty() || prefix == "/") break;
    const bool exists = CheckedExists(H5Lexists(file_.get(), prefix.c_str(), H5P_DEFAULT),
                                      temporary_path_, "H5Lexists " + prefix);
    if (!exists) {
      CheckedId(H5Gcreate2(file_.get(), prefix.c_str(), H5P_DEFAULT, creation.get(), H5P_DEFAULT),
                H5Gclose, temporary_path_, "H5Gcreate2 " + prefix);
    }
    if (end == std::string::npos) break;
  }
}

void Hdf5File::WriteStep(const std::string& what, const std::function<void()>& step) {
  try {
    RunCollectiveStep(comm_.get(), step);
  } catch (const std::runtime_error& error) {
    // HDF5 does not pass on the system's reason (ENOSPC, EROFS): say what room is left.
    std::string reason = error.what();
    const std::string prefix = temporary_path_ + ": ";
    if (reason.starts_with(prefix)) reason.erase(0, prefix.size());
    std::error_code failed;
    const fs::path parent = fs::path(final_path_).parent_path();
    const fs::space_info space = fs::space(parent.empty() ? fs::path(".") : parent, failed);
    const std::string room =
        failed ? "" : "; " + std::to_string(space.available) + " bytes free on its file system";
    throw InputError(final_path_, 0, "", what + " failed: " + reason + room + "; no file written");
  }
}

void Hdf5File::RequireOpen(const char* operation) const {
  if (!file_.valid()) {
    throw std::logic_error("Hdf5File " + final_path_ + ": " + operation +
                           " after Commit (or a failed Commit)");
  }
}

}  // namespace fleetsim::output
