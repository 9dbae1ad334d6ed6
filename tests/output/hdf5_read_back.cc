#include "output/hdf5_read_back.h"

#include <stdexcept>

namespace fleetsim::output::testing {

using internal::CheckedId;
using internal::CheckStatus;
using internal::Hdf5Handle;

ReadBack::ReadBack(const std::string& path) : path_(path) {
  internal::SilenceHdf5ErrorPrinting();
  file_ = CheckedId(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose, path, "H5Fopen");
}

Hdf5Handle ReadBack::OpenDataset(const std::string& dataset) const {
  return CheckedId(H5Dopen2(file_.get(), dataset.c_str(), H5P_DEFAULT), H5Dclose, path_,
                   "H5Dopen2 " + dataset);
}

int64_t ReadBack::RowCount(const std::string& dataset) const {
  const Hdf5Handle data = OpenDataset(dataset);
  const Hdf5Handle space = CheckedId(H5Dget_space(data.get()), H5Sclose, path_, "H5Dget_space");
  if (H5Sget_simple_extent_ndims(space.get()) != 1)
    throw std::runtime_error(path_ + ": " + dataset + " is not one-dimensional");
  hsize_t rows[1] = {0};
  CheckStatus(H5Sget_simple_extent_dims(space.get(), rows, nullptr), path_, "extent");
  return static_cast<int64_t>(rows[0]);
}

std::vector<StoredMember> ReadBack::Members(const std::string& dataset) const {
  const Hdf5Handle data = OpenDataset(dataset);
  const Hdf5Handle type = CheckedId(H5Dget_type(data.get()), H5Tclose, path_, "H5Dget_type");
  std::vector<StoredMember> members;
  const int count = H5Tget_nmembers(type.get());
  for (unsigned i = 0; count > 0 && i < static_cast<unsigned>(count); ++i) {
    char* name = H5Tget_member_name(type.get(), i);
    const Hdf5Handle member =
        CheckedId(H5Tget_member_type(type.get(), i), H5Tclose, path_, "H5Tget_member_type");
    const H5T_class_t type_class = H5Tget_class(member.get());
    const bool text = type_class == H5T_STRING;
    members.push_back({name, type_class, H5Tget_size(member.get()),
                       text ? H5Tget_strpad(member.get()) : H5T_STR_ERROR,
                       text ? H5Tget_cset(member.get()) : H5T_CSET_ERROR});
    H5free_memory(name);
  }
  return members;
}

std::vector<unsigned char> ReadBack::RawBytes(const std::string& dataset) const {
  const Hdf5Handle data = OpenDataset(dataset);
  const Hdf5Handle type = CheckedId(H5Dget_type(data.get()), H5Tclose, path_, "H5Dget_type");
  std::vector<unsigned char> bytes(static_cast<std::size_t>(RowCount(dataset)) *
                                   H5Tget_size(type.get()));
  if (!bytes.empty()) Read(dataset, type.get(), bytes.data());
  return bytes;
}

void ReadBack::Read(const std::string& dataset, hid_t memory_type, void* into) const {
  const Hdf5Handle data = OpenDataset(dataset);
  CheckStatus(H5Dread(data.get(), memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, into), path_,
              "H5Dread " + dataset);
}

void ReadBack::ReadAttribute(const std::string& object, const std::string& name, hid_t memory_type,
                             void* into) const {
  const Hdf5Handle attribute = CheckedId(
      H5Aopen_by_name(file_.get(), object.c_str(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT),
      H5Aclose, path_, "H5Aopen_by_name " + object + " " + name);
  CheckStatus(H5Aread(attribute.get(), memory_type, into), path_, "H5Aread " + name);
}

std::string ReadBack::StringAttribute(const std::string& object, const std::string& name) const {
  const Hdf5Handle attribute = CheckedId(
      H5Aopen_by_name(file_.get(), object.c_str(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT),
      H5Aclose, path_, "H5Aopen_by_name " + object + " " + name);
  const Hdf5Handle type =
      CheckedId(H5Aget_type(attribute.get()), H5Tclose, path_, "H5Aget_type " + name);
  if (H5Tget_class(type.get()) != H5T_STRING || H5Tis_variable_str(type.get()) != 0)
    throw std::runtime_error(path_ + ": attribute " + name + " is not a fixed-length string");
  std::string value(H5Tget_size(type.get()), '\0');
  CheckStatus(H5Aread(attribute.get(), type.get(), value.data()), path_, "H5Aread " + name);
  return value;
}

std::string ReadBack::Text(const std::string& dataset) const {
  const Hdf5Handle data = OpenDataset(dataset);
  const Hdf5Handle type = CheckedId(H5Dget_type(data.get()), H5Tclose, path_, "H5Dget_type");
  const Hdf5Handle space = CheckedId(H5Dget_space(data.get()), H5Sclose, path_, "H5Dget_space");
  if (H5Tget_class(type.get()) != H5T_STRING || H5Tis_variable_str(type.get()) != 0 ||
      H5Sget_simple_extent_type(space.get()) != H5S_SCALAR)
    throw std::runtime_error(path_ + ": " + dataset + " is not a scalar fixed-length string");
  std::string value(H5Tget_size(type.get()), '\0');
  CheckStatus(H5Dread(data.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, value.data()), path_,
              "H5Dread " + dataset);
  return value;
}

int64_t ReadBack::Int64Attribute(const std::string& object, const std::string& name) const {
  int64_t value = 0;
  ReadAttribute(object, name, H5T_NATIVE_INT64, &value);
  return value;
}

double ReadBack::Float64Attribute(const std::string& object, const std::string& name) const {
  double value = 0;
  ReadAttribute(object, name, H5T_NATIVE_DOUBLE, &value);
  return value;
}

std::vector<std::string> ReadBack::StringListAttribute(const std::string& object,
                                                       const std::string& name) const {
  const Hdf5Handle attribute = CheckedId(
      H5Aopen_by_name(file_.get(), object.c_str(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT),
      H5Aclose, path_, "H5Aopen_by_name " + name);
  const Hdf5Handle space =
      CheckedId(H5Aget_space(attribute.get()), H5Sclose, path_, "H5Aget_space");
  hsize_t count[1] = {0};
  if (H5Sget_simple_extent_ndims(space.get()) != 1)
    throw std::runtime_error(path_ + ": " + name + " is not a 1-D attribute");
  H5Sget_simple_extent_dims(space.get(), count, nullptr);
  const Hdf5Handle type = CheckedId(H5Tcopy(H5T_C_S1), H5Tclose, path_, "H5Tcopy");
  H5Tset_size(type.get(), H5T_VARIABLE);
  H5Tset_cset(type.get(), H5T_CSET_UTF8);
  std::vector<char*> pointers(count[0], nullptr);
  std::vector<std::string> values;
  if (count[0] == 0) return values;
  CheckStatus(H5Aread(attribute.get(), type.get(), pointers.data()), path_, "H5Aread " + name);
  for (char* p : pointers)
    values.emplace_back(p == nullptr ? "" : p);
  H5Dvlen_reclaim(type.get(), space.get(), H5P_DEFAULT, pointers.data());
  return values;
}

std::vector<int> ReadBack::Filters(const std::string& dataset) const {
  const Hdf5Handle data = OpenDataset(dataset);
  const Hdf5Handle creation =
      CheckedId(H5Dget_create_plist(data.get()), H5Pclose, path_, "H5Dget_create_plist");
  std::vector<int> filters;
  const int count = H5Pget_nfilters(creation.get());
  for (int i = 0; i < count; ++i) {
    unsigned flags = 0;
    std::size_t values = 0;
    unsigned config = 0;
    filters.push_back(H5Pget_filter2(creation.get(), static_cast<unsigned>(i), &flags, &values,
                                     nullptr, 0, nullptr, &config));
  }
  return filters;
}

int64_t ReadBack::ChunkRows(const std::string& dataset) const {
  const Hdf5Handle data = OpenDataset(dataset);
  const Hdf5Handle creation =
      CheckedId(H5Dget_create_plist(data.get()), H5Pclose, path_, "H5Dget_create_plist");
  if (H5Pget_layout(creation.get()) != H5D_CHUNKED) return 0;
  hsize_t rows[1] = {0};
  H5Pget_chunk(creation.get(), 1, rows);
  return static_cast<int64_t>(rows[0]);
}

}  // namespace fleetsim::output::testing
