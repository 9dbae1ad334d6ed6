// A file with given contents in a fresh temporary directory, removed afterwards.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

namespace fleetsim::testing {

class TempFile {
 public:
  TempFile(const std::string& name, const std::string& contents) {
    dir_ = std::filesystem::temp_directory_path() /
           ("fleetsim-test-" + std::to_string(reinterpret_cast<std::uintptr_t>(this)) + "-" +
            std::to_string(counter_++));
    std::filesystem::create_directories(dir_);
    path_ = dir_ / name;
    std::ofstream(path_) << contents;
  }
  ~TempFile() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  std::string path() const { return path_.string(); }
  std::filesystem::path dir() const { return dir_; }

 private:
  static inline int counter_ = 0;
  std::filesystem::path dir_;
  std::filesystem::path path_;
};

}  // namespace fleetsim::testing
