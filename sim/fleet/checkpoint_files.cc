#include "fleet/checkpoint_files.h"

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "core/checkpoint_io.h"
#include "core/input_error.h"

namespace fleetsim {
namespace {

constexpr std::string_view kMagic = "fleetsim-checkpoint";

std::string Hex(uint64_t v) {
  char text[17];
  std::snprintf(text, sizeof text, "%016" PRIx64, v);
  return text;
}

std::string ReadWhole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw InputError(path, 0, "checkpoint", "cannot be read: " + std::string(std::strerror(errno)));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

std::string CheckpointManifestPath(const std::string& dir) {
  return (std::filesystem::path(dir) / "manifest").string();
}

std::string CheckpointRankPath(const std::string& dir, int64_t sequence, int rank) {
  return (std::filesystem::path(dir) /
          ("ckpt-" + std::to_string(sequence) + "-rank-" + std::to_string(rank) + ".bin"))
      .string();
}

void WriteFileAtomically(const std::string& path, std::string_view text) {
  const std::string tmp = path + ".tmp";
  std::FILE* out = std::fopen(tmp.c_str(), "wb");
  bool ok = out != nullptr;
  if (ok) ok = std::fwrite(text.data(), 1, text.size(), out) == text.size();
  if (out != nullptr) ok = std::fclose(out) == 0 && ok;
  if (!ok) {
    const std::string why = std::strerror(errno);
    std::remove(tmp.c_str());
    throw InputError(path, 0, "checkpoint", "cannot be written: " + why);
  }
  std::error_code error;
  std::filesystem::rename(tmp, path, error);
  if (error)
    throw InputError(path, 0, "checkpoint", "cannot be renamed into place: " + error.message());
}

std::string ManifestText(const CheckpointManifest& m) {
  std::string text = std::string(kMagic) + " " + std::to_string(m.format) + "\n";
  auto line = [&](const char* key, const std::string& value) {
    text += std::string(key) + " " + value + "\n";
  };
  line("build", m.build);
  line("inputs", Hex(m.inputs));
  line("sequence", std::to_string(m.sequence));
  line("ranks", std::to_string(m.ranks));
  line("window_end_ns", std::to_string(m.window_end));
  line("snapshot_epoch", std::to_string(m.snapshot_epoch));
  line("last_decision_ns", std::to_string(m.last_decision));
  line("decisions", std::to_string(m.decisions));
  line("windows", std::to_string(m.windows));
  line("snapshots", std::to_string(m.snapshots));
  line("out_of_grid_lookups", std::to_string(m.out_of_grid));
  line("workload_taken", std::to_string(m.workload_taken));
  line("next_checkpoint_ns", std::to_string(m.next_checkpoint));
  for (std::size_t r = 0; r < m.files.size(); ++r)
    line("file", std::to_string(r) + " " + std::to_string(m.files[r].bytes) + " " +
                     Hex(m.files[r].checksum));
  std::string command = m.command_line;
  for (char& c : command) {
    if (c == '\n') c = ' ';
  }
  line("command_line", command);
  return text;
}

CheckpointManifest ReadCheckpointManifest(const std::string& dir) {
  const std::string path = CheckpointManifestPath(dir);
  if (!std::filesystem::exists(path))
    throw InputError(path, 0, "manifest",
                     "no checkpoint here (the manifest is missing: was it written by `fleetsim "
                     "run --checkpoint`?)");
  const std::string whole = ReadWhole(path);
  if (!whole.empty() && whole.back() != '\n')
    throw InputError(path, static_cast<int>(std::count(whole.begin(), whole.end(), '\n')) + 1,
                     "format", "ends mid-line (truncated manifest?)");
  std::istringstream in(whole);
  CheckpointManifest m;
  std::map<std::string, int> seen;
  std::string text;
  int line = 0;
  while (std::getline(in, text)) {
    ++line;
    const std::size_t space = text.find(' ');
    const std::string key = text.substr(0, space);
    const std::string value = space == std::string::npos ? "" : text.substr(space + 1);
    auto number = [&]() -> int64_t {
      try {
        std::size_t used = 0;
        const int64_t v = std::stoll(value, &used);
        if (used == value.size()) return v;
      } catch (const std::exception&) {
      }
      throw InputError(path, line, key, "not an integer: " + QuoteInput(value));
    };
    auto hex = [&](const std::string& field) -> uint64_t {
      try {
        std::size_t used = 0;
        const uint64_t v = std::stoull(field, &used, 16);
        if (used == field.size() && used == 16) return v;
      } catch (const std::exception&) {
      }
      throw InputError(path, line, key, "not 16 hex digits: " + QuoteInput(field));
    };
    if (line == 1) {
      if (key != kMagic) throw InputError(path, 1, "format", "not a fleetsim checkpoint manifest");
      if (number() != kCheckpointFormat)
        throw InputError(path, 1, "format",
                         "checkpoint format " + value + ", this fleetsim reads format " +
                             std::to_string(kCheckpointFormat));
      continue;
    }
    ++seen[key];
    if (key == "build")
      m.build = value;
    else if (key == "inputs")
      m.inputs = hex(value);
    else if (key == "sequence")
      m.sequence = number();
    else if (key == "ranks")
      m.ranks = static_cast<int>(number());
    else if (key == "window_end_ns")
      m.window_end = number();
    else if (key == "snapshot_epoch")
      m.snapshot_epoch = number();
    else if (key == "last_decision_ns")
      m.last_decision = number();
    else if (key == "decisions")
      m.decisions = number();
    else if (key == "windows")
      m.windows = number();
    else if (key == "snapshots")
      m.snapshots = number();
    else if (key == "out_of_grid_lookups")
      m.out_of_grid = number();
    else if (key == "workload_taken")
      m.workload_taken = number();
    else if (key == "next_checkpoint_ns")
      m.next_checkpoint = number();
    else if (key == "command_line")
      m.command_line = value;
    else if (key == "file") {
      std::istringstream fields(value);
      std::string rank, bytes, checksum;
      fields >> rank >> bytes >> checksum;
      if (rank != std::to_string(m.files.size()) || bytes.empty() ||
          bytes.find_first_not_of("0123456789") != std::string::npos)
        throw InputError(path, line, key,
                         "expected \"file <rank> <bytes> <checksum>\" in rank order");
      m.files.push_back({std::stoull(bytes), hex(checksum)});
    } else {
      throw InputError(path, line, key, "unknown key");
    }
  }
  if (line == 0) throw InputError(path, 0, "format", "empty manifest");
  for (const char* key :
       {"build", "inputs", "sequence", "ranks", "window_end_ns", "snapshot_epoch",
        "last_decision_ns", "decisions", "windows", "snapshots", "out_of_grid_lookups",
        "workload_taken", "next_checkpoint_ns", "command_line"}) {
    if (seen[key] != 1)
      throw InputError(path, 0, key, seen[key] == 0 ? "missing (truncated manifest?)" : "repeated");
  }
  if (m.ranks < 1 || static_cast<int>(m.files.size()) != m.ranks)
    throw InputError(path, 0, "file",
                     "lists " + std::to_string(m.files.size()) + " rank files for " +
                         std::to_string(m.ranks) + " ranks");
  return m;
}

std::string ReadCheckpointRankFile(const std::string& dir, const CheckpointManifest& manifest,
                                   int rank) {
  const std::string path = CheckpointRankPath(dir, manifest.sequence, rank);
  if (!std::filesystem::exists(path))
    throw InputError(path, 0, "checkpoint", "missing (the manifest lists it)");
  std::string bytes = ReadWhole(path);
  const CheckpointRankFile& expected = manifest.files[static_cast<std::size_t>(rank)];
  if (bytes.size() != expected.bytes)
    throw InputError(path, 0, "checkpoint",
                     std::to_string(bytes.size()) + " bytes, the manifest says " +
                         std::to_string(expected.bytes) + " (truncated or replaced)");
  if (HashBytes(bytes) != expected.checksum)
    throw InputError(path, 0, "checkpoint", "checksum differs from the manifest's (corrupt)");
  return bytes;
}

void RemoveOtherCheckpoints(const std::string& dir, int64_t keep) {
  const std::string prefix = "ckpt-" + std::to_string(keep) + "-rank-";
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("ckpt-", 0) != 0 || name.rfind(prefix, 0) == 0) continue;
    std::filesystem::remove(entry.path(), error);
  }
}

}  // namespace fleetsim
