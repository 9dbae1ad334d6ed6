// The byte form of a checkpoint (docs/CHECKPOINT.md): every stateful part writes its own
// state with a CheckpointWriter in Save and reads it back with a CheckpointReader in Load,
// next to the fields it owns, so that a new field is saved where it is declared.
//
// Values are fixed-width little-endian as this machine stores them (a checkpoint is read
// back by the same build: the manifest names it); a reader that runs past its end, or
// finds a count that cannot be, throws one located InputError naming the checkpoint file
// and the part being read, never reads out of bounds.
//
//   CheckpointWriter w;
//   w.I64(now_);
//   w.Pods(blocks_);                              // a vector of trivially copyable values
//   CheckpointReader r(w.bytes(), "ckpt/rank-0.bin");
//   r.Part("instance 3");                         // named in any error that follows
//   now_ = r.I64();
//   blocks_ = r.Pods<BlockId>();
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace fleetsim {

// A 64-bit hash of `bytes` (word by word through Mix64), continuing from `seed`: the
// checksum of a checkpoint file and the fingerprint of a run's inputs.
uint64_t HashBytes(std::string_view bytes, uint64_t seed = 0);

class CheckpointWriter {
 public:
  void U64(uint64_t v) { Raw(&v, sizeof v); }
  void I64(int64_t v) { Raw(&v, sizeof v); }
  void I32(int32_t v) { Raw(&v, sizeof v); }
  void Bool(bool v) { U64(v ? 1 : 0); }
  void F64(double v) { Raw(&v, sizeof v); }
  void Str(std::string_view s) {
    U64(s.size());
    Raw(s.data(), s.size());
  }
  template <typename T>
  void Pods(const std::vector<T>& values) {
    static_assert(std::is_trivially_copyable_v<T>);
    U64(values.size());
    Raw(values.data(), values.size() * sizeof(T));
  }
  template <typename T>
  void Pod(const T& value) {
    static_assert(std::is_trivially_copyable_v<T>);
    Raw(&value, sizeof value);
  }
  // A nested block of bytes with its length, so a reader may skip it whole.
  void Blob(std::string_view bytes) { Str(bytes); }

  const std::string& bytes() const { return bytes_; }
  std::string Take() { return std::move(bytes_); }

 private:
  void Raw(const void* data, std::size_t n) { bytes_.append(static_cast<const char*>(data), n); }
  std::string bytes_;
};

class CheckpointReader {
 public:
  // `file` names the checkpoint in errors.
  CheckpointReader(std::string_view bytes, std::string file)
      : bytes_(bytes), file_(std::move(file)) {}

  // The part read from here on, for errors ("instance 3", "gateway 1 router 0").
  void Part(std::string part) { part_ = std::move(part); }
  const std::string& file() const { return file_; }

  uint64_t U64() { return Fixed<uint64_t>(); }
  int64_t I64() { return Fixed<int64_t>(); }
  int32_t I32() { return Fixed<int32_t>(); }
  bool Bool();
  double F64() { return Fixed<double>(); }
  std::string Str() { return std::string(View()); }
  std::string_view Blob() { return View(); }
  template <typename T>
  std::vector<T> Pods() {
    static_assert(std::is_trivially_copyable_v<T>);
    const uint64_t n = Count(sizeof(T));
    std::vector<T> values(n);
    const char* from = Take(n * sizeof(T));
    // An empty vector's data() may be null, and memcpy's arguments must not be.
    if (n > 0) std::memcpy(values.data(), from, n * sizeof(T));
    return values;
  }
  template <typename T>
  T Pod() {
    return Fixed<T>();
  }
  // A count of items of at least `item_bytes` each, checked against the bytes left.
  uint64_t Count(std::size_t item_bytes);
  // An error unless `ok`: the saved `what` cannot be.
  void Require(bool ok, std::string_view what) const;
  [[noreturn]] void Fail(const std::string& message) const;

  bool done() const { return at_ == bytes_.size(); }
  std::size_t left() const { return bytes_.size() - at_; }

 private:
  template <typename T>
  T Fixed() {
    T v;
    std::memcpy(&v, Take(sizeof v), sizeof v);
    return v;
  }
  std::string_view View() {
    const uint64_t n = Count(1);
    return {Take(n), n};
  }
  const char* Take(std::size_t n);

  std::string_view bytes_;
  std::size_t at_ = 0;
  std::string file_;
  std::string part_ = "header";
};

}  // namespace fleetsim
