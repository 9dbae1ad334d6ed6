#include "perf/kernel_db/nccl_tests_output.h"

#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string_view>
#include <vector>

#include "core/input_error.h"

namespace fleetsim {
namespace {

bool IsReduction(const std::string& operation) {
  return operation == "all_reduce" || operation == "reduce_scatter" || operation == "reduce";
}

bool IsNcclTestsType(const std::string& type) {
  for (const char* known : {"int8", "uint8", "int32", "uint32", "int64", "uint64", "half", "float",
                            "double", "bfloat16", "f8e4m3", "f8e5m2"})
    if (type == known) return true;
  return false;
}

std::vector<std::string> Tokens(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  for (std::string t; in >> t;)
    out.push_back(t);
  return out;
}

template <typename T>
bool Parse(const std::string& text, T& value) {
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  return ec == std::errc() && ptr == end;
}

// "nccl-library=22304" -> "2.23.4" (NCCL_VERSION_CODE: major x 10000 + minor x 100 + patch).
std::string LibraryVersion(const std::string& line) {
  const std::string key = "nccl-library=";
  const std::size_t at = line.find(key);
  if (at == std::string::npos) return "";
  const std::vector<std::string> rest = Tokens(line.substr(at + key.size()));
  if (rest.empty()) return "";
  int code = 0;
  if (!Parse(rest.front(), code) || code < 10000) return EscapeInput(rest.front());
  return std::to_string(code / 10000) + "." + std::to_string(code / 100 % 100) + "." +
         std::to_string(code % 100);
}

}  // namespace

MeasuredCollectives LoadNcclTestsOutput(const std::string& path, const std::string& operation) {
  if (operation != "all_reduce" && operation != "all_gather" && operation != "reduce_scatter" &&
      operation != "alltoall" && operation != "broadcast" && operation != "reduce") {
    throw OptionError("--op", "unknown collective " + QuoteInput(operation) +
                                  " (accepted: all_reduce, all_gather, reduce_scatter, "
                                  "alltoall, broadcast, reduce)");
  }
  std::ifstream in(path);
  if (!in) throw InputError(path, 0, "file", "cannot be read");
  MeasuredCollectives t;
  t.system = path;
  t.nccl_file = path;
  int ranks = 0;
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    const std::vector<std::string> tokens = Tokens(line);
    if (tokens.empty()) continue;
    if (tokens[0].front() == '#') {
      if (t.nccl_version.empty()) t.nccl_version = LibraryVersion(line);
      // "#  Rank  0 Group  0 Pid ... device  0 [0x18] NVIDIA H100 80GB HBM3": one per GPU.
      const bool rank_line =
          (tokens[0] == "#" && tokens.size() > 1 && tokens[1] == "Rank") || tokens[0] == "#Rank";
      if (rank_line) ++ranks;
      continue;
    }
    // Result rows start with the size; other lines (NCCL INFO, warnings) are not results.
    int64_t bytes = 0;
    if (!Parse(tokens[0], bytes)) continue;
    if (bytes < 0) throw InputError(path, number, "size", "negative size " + QuoteInput(tokens[0]));
    // size count type redop root | time algbw busbw #wrong | time algbw busbw #wrong;
    // nccl-tests before 2.10 print no root column.
    if (tokens.size() != 13 && tokens.size() != 12) {
      throw InputError(path, number, "row",
                       "a result row has " + std::to_string(tokens.size()) +
                           " columns, expected 13 (size count type redop root, then time "
                           "algbw busbw #wrong out of place and in place) or 12 (no root)");
    }
    MeasuredCollective row;
    row.operation = operation;
    row.dtype = tokens[2];
    if (!IsNcclTestsType(row.dtype)) {
      throw InputError(path, number, "type",
                       "unknown type " + QuoteInput(row.dtype) +
                           " (nccl-tests' -d names: int8, uint8, int32, uint32, int64, uint64, "
                           "half, float, double, bfloat16, f8e4m3, f8e5m2)");
    }
    const std::string& redop = tokens[3];
    if (IsReduction(operation) == (redop == "none")) {
      throw InputError(path, number, "redop",
                       QuoteInput(redop) +
                           (redop == "none" ? " is no reduction, so the output is not of "
                                            : " is a reduction, so the output is not of ") +
                           operation + "; is --op right?");
    }
    const std::string& time = tokens[tokens.size() == 13 ? 5 : 4];
    if (!Parse(time, row.measured_us) || !(row.measured_us > 0) ||
        !std::isfinite(row.measured_us)) {
      throw InputError(path, number, "time",
                       "out-of-place time " + QuoteInput(time) + " is not a positive number of us");
    }
    if (bytes == 0) continue;
    row.bytes = bytes;
    t.rows.push_back(row);
  }
  if (t.rows.empty()) {
    throw InputError(path, number, "rows",
                     "no nccl-tests result rows (size count type redop root time ...)");
  }
  if (ranks < 2) {
    throw InputError(path, 0, "# Rank lines",
                     std::to_string(ranks) +
                         " '#  Rank N Group ...' header lines: nccl-tests prints one per GPU, "
                         "and a collective needs 2 or more");
  }
  for (MeasuredCollective& row : t.rows)
    row.gpus = ranks;
  if (t.nccl_version.empty()) t.nccl_version = "unknown";
  return t;
}

}  // namespace fleetsim
