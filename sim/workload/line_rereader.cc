#include "workload/line_rereader.h"

#include <filesystem>
#include <utility>

namespace fleetsim {

LineRereader::LineRereader(std::string path) : path_(std::move(path)) {
  std::error_code error;
  rereadable_ = std::filesystem::is_regular_file(path_, error);
}

std::optional<std::string> LineRereader::Line(int line) {
  if (!rereadable_ || line < 1) return std::nullopt;
  if (!in_.is_open()) {
    in_.open(path_, std::ios::binary);
    if (!in_) {
      rereadable_ = false;
      return std::nullopt;
    }
    stride_starts_.push_back(0);
  }
  const auto stride = static_cast<std::size_t>((line - 1) / kStride);
  std::string text;
  // Extend the index up to the stride that holds `line`.
  while (stride_starts_.size() <= stride) {
    in_.clear();
    in_.seekg(stride_starts_.back());
    for (int i = 0; i < kStride; ++i) {
      if (!std::getline(in_, text)) return std::nullopt;  // the file has fewer lines
    }
    const std::streamoff next = in_.tellg();
    if (next < 0) return std::nullopt;  // the file ends at that line
    stride_starts_.push_back(next);
  }
  in_.clear();
  in_.seekg(stride_starts_[stride]);
  for (int i = (line - 1) % kStride; i >= 0; --i) {
    if (!std::getline(in_, text)) return std::nullopt;
  }
  return text;
}

std::optional<int> LineRereader::FirstLine(
    const std::function<bool(int line, std::string& text)>& match) {
  if (!rereadable_) return std::nullopt;
  std::ifstream in(path_, std::ios::binary);
  std::string text;
  for (int line = 1; std::getline(in, text); ++line) {
    if (match(line, text)) return line;
  }
  return std::nullopt;
}

}  // namespace fleetsim
