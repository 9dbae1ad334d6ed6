#include "output/internal/hdf5_handle.h"

#include <stdexcept>
#include <utility>

namespace fleetsim::output::internal {
namespace {

// H5Ewalk2 visitor: walking upward, the first entry is the innermost -- the one that says
// what really went wrong ("No such file or directory" rather than "unable to create file").
herr_t KeepInnermost(unsigned depth, const H5E_error2_t* error, void* text) {
  if (depth == 0 && error->desc != nullptr) *static_cast<std::string*>(text) = error->desc;
  return 0;
}

}  // namespace

Hdf5Handle::Hdf5Handle(Hdf5Handle&& other) noexcept
    : id_(std::exchange(other.id_, H5I_INVALID_HID)), closer_(other.closer_) {}

Hdf5Handle& Hdf5Handle::operator=(Hdf5Handle&& other) noexcept {
  if (this != &other) {
    Reset();
    id_ = std::exchange(other.id_, H5I_INVALID_HID);
    closer_ = other.closer_;
  }
  return *this;
}

bool Hdf5Handle::Close() {
  if (id_ < 0 || closer_ == nullptr) return true;
  const herr_t status = closer_(std::exchange(id_, H5I_INVALID_HID));
  return status >= 0;
}

void SilenceHdf5ErrorPrinting() {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}

std::string TakeHdf5ErrorMessage() {
  std::string text;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, KeepInnermost, &text);
  H5Eclear2(H5E_DEFAULT);
  return text;
}

void ThrowHdf5Failure(const std::string& file, const std::string& call) {
  const std::string reason = TakeHdf5ErrorMessage();
  throw std::runtime_error(file + ": " + call + " failed" + (reason.empty() ? "" : ": " + reason));
}

Hdf5Handle CheckedId(hid_t id, Hdf5Handle::Closer closer, const std::string& file,
                     const std::string& call) {
  if (id < 0) ThrowHdf5Failure(file, call);
  return Hdf5Handle(id, closer);
}

void CheckStatus(herr_t status, const std::string& file, const std::string& call) {
  if (status < 0) ThrowHdf5Failure(file, call);
}

bool CheckedExists(htri_t answer, const std::string& file, const std::string& call) {
  if (answer < 0) ThrowHdf5Failure(file, call);
  return answer > 0;
}

}  // namespace fleetsim::output::internal
