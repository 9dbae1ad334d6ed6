// Reads a line of a trace file again, by number, for the rare check that needs an earlier
// line's text (two ids with one 64-bit hash, id_hash_table.h). It costs nothing until
// asked: the first call scans the file up to its line, keeping where every kStride-th
// line starts (8 bytes per kStride lines), and later calls seek to the nearest of those.
//
//   LineRereader again("trace.jsonl");
//   std::optional<std::string> text = again.Line(12);  // nullopt: a pipe, or no line 12
#pragma once

#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace fleetsim {

class LineRereader {
 public:
  static constexpr int kStride = 256;

  // Whether `path` can be read again is decided here, before the trace is read: a pipe
  // (or anything but a regular file) cannot.
  explicit LineRereader(std::string path);

  // False for a pipe (or anything but a regular file): Line and FirstLine give nullopt.
  bool rereadable() const { return rereadable_; }

  // Line `line` (1-based, lines as std::getline splits them), or nullopt.
  std::optional<std::string> Line(int line);

  // The first line for which `match(line, text)` holds, read from the start; nullopt
  // when none does or the file cannot be read again.
  std::optional<int> FirstLine(const std::function<bool(int line, std::string& text)>& match);

 private:
  std::string path_;
  bool rereadable_ = false;
  std::ifstream in_;
  std::vector<std::streamoff> stride_starts_;  // [k]: where line k * kStride + 1 starts
};

}  // namespace fleetsim
