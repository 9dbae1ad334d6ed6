// Rows as they are stored in the file: the schema's columns back to back, without the C++
// struct's padding, and strings cleared after their first NUL. The file then holds only
// bytes the simulator chose -- no uninitialised padding -- so the same rows give the same
// bytes at any rank count. Memory and file use the same HDF5 type, so HDF5 converts
// nothing and collective I/O stays collective (a type conversion would make HDF5 fall
// back to independent I/O). Private to fleetsim_output.
//
//   Hdf5Handle type = PackedRowType(schema, path);
//   std::vector<unsigned char> bytes = PackRows(schema, rows, row_count);
//   H5Dwrite(dataset, type.get(), memory_space, file_space, transfer, bytes.data());
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "output/internal/hdf5_handle.h"
#include "output/table_schema.h"

namespace fleetsim::output::internal {

// The HDF5 compound type of one packed row: native integers and doubles, fixed-length
// NUL-padded strings. `file` only labels errors.
Hdf5Handle PackedRowType(const TableSchema& schema, const std::string& file);

// `row_count` rows of schema.row_size() bytes at `rows`, packed.
std::vector<unsigned char> PackRows(const TableSchema& schema, const void* rows,
                                    std::size_t row_count);

}  // namespace fleetsim::output::internal
