// Owning wrappers for HDF5 identifiers, and return-code checks that turn a failing HDF5
// call into std::runtime_error naming the file, the call and HDF5's own reason. Private
// to fleetsim_output.
//
//   Hdf5Handle space = CheckedId(H5Screate(H5S_SCALAR), H5Sclose, path, "H5Screate");
//   CheckStatus(H5Awrite(attr.get(), type.get(), &value), path, "H5Awrite " + name);
//   // `space` is closed when it goes out of scope.
#pragma once

#include <string>

#include <hdf5.h>

namespace fleetsim::output::internal {

class Hdf5Handle {
 public:
  using Closer = herr_t (*)(hid_t);

  Hdf5Handle() = default;
  Hdf5Handle(hid_t id, Closer closer) : id_(id), closer_(closer) {}
  ~Hdf5Handle() { Reset(); }
  Hdf5Handle(Hdf5Handle&& other) noexcept;
  Hdf5Handle& operator=(Hdf5Handle&& other) noexcept;
  Hdf5Handle(const Hdf5Handle&) = delete;
  Hdf5Handle& operator=(const Hdf5Handle&) = delete;

  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }
  // Closes now and returns whether HDF5 accepted the close; a destructor cannot report it.
  bool Close();

 private:
  void Reset() { Close(); }

  hid_t id_ = H5I_INVALID_HID;
  Closer closer_ = nullptr;
};

// Stops HDF5 printing its error stack to stderr: every failure reaches the caller as an
// exception instead, and mpirun output stays readable.
void SilenceHdf5ErrorPrinting();

// The most specific message on HDF5's error stack (empty if none), and clears the stack.
std::string TakeHdf5ErrorMessage();

// Throw std::runtime_error("<file>: <call> failed: <HDF5's reason>") on failure.
Hdf5Handle CheckedId(hid_t id, Hdf5Handle::Closer closer, const std::string& file,
                     const std::string& call);
void CheckStatus(herr_t status, const std::string& file, const std::string& call);
// For the H5?exists calls, which return a tri-state.
bool CheckedExists(htri_t answer, const std::string& file, const std::string& call);
[[noreturn]] void ThrowHdf5Failure(const std::string& file, const std::string& call);

}  // namespace fleetsim::output::internal
