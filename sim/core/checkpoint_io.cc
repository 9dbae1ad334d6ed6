#include "core/checkpoint_io.h"

#include "core/hash64.h"
#include "core/input_error.h"

namespace fleetsim {

uint64_t HashBytes(std::string_view bytes, uint64_t seed) {
  uint64_t h = Mix64(seed ^ (kGoldenGamma + bytes.size()));
  std::size_t at = 0;
  for (; at + 8 <= bytes.size(); at += 8) {
    uint64_t word;
    std::memcpy(&word, bytes.data() + at, 8);
    h = Mix64(h ^ word) + kGoldenGamma;
  }
  uint64_t tail = 0;
  std::memcpy(&tail, bytes.data() + at, bytes.size() - at);
  return Mix64(h ^ tail);
}

bool CheckpointReader::Bool() {
  const uint64_t v = U64();
  Require(v <= 1, "a flag");
  return v == 1;
}

uint64_t CheckpointReader::Count(std::size_t item_bytes) {
  const uint64_t n = U64();
  if (item_bytes > 0 && n > left() / item_bytes)
    Fail("a count of " + std::to_string(n) + " runs past the file's end (truncated or corrupt)");
  return n;
}

void CheckpointReader::Require(bool ok, std::string_view what) const {
  if (!ok) Fail("the saved " + std::string(what) + " cannot be (corrupt checkpoint)");
}

void CheckpointReader::Fail(const std::string& message) const {
  throw InputError(file_, 0, part_, message + " at byte " + std::to_string(at_));
}

const char* CheckpointReader::Take(std::size_t n) {
  if (n > left()) Fail("ends early (truncated)");
  const char* data = bytes_.data() + at_;
  at_ += n;
  return data;
}

}  // namespace fleetsim
