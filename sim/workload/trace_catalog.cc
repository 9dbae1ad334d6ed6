#include "workload/trace_catalog.h"

#include <algorithm>
#include <cstdlib>
#include <map>

#include "core/input_error.h"
#include "core/project_paths.h"

namespace fleetsim {
namespace {

namespace fs = std::filesystem;

// Trace files: CSV and JSONL, but not the per-run time series beside vLLM-bench traces.
bool IsTraceFile(const fs::path& path) {
  const std::string ext = path.extension().string();
  return (ext == ".csv" || ext == ".jsonl") && path.filename() != "timeseries.csv";
}

// name -> file
std::map<std::string, fs::path> Catalog() {
  std::map<std::string, fs::path> traces;
  const fs::path dir = TracesDir();
  std::error_code error;
  if (!fs::is_directory(dir, error)) return traces;
  for (const auto& entry : fs::recursive_directory_iterator(dir, error)) {
    if (!entry.is_regular_file() || !IsTraceFile(entry.path())) continue;
    fs::path name = fs::relative(entry.path(), dir);
    name.replace_extension();
    traces[name.generic_string()] = entry.path();
  }
  return traces;
}

}  // namespace

fs::path TracesDir() {
  const char* env = std::getenv("FLEETSIM_TRACES");
  if (env != nullptr && *env != '\0') return fs::path(env);
  return (ProjectRoot() / ".." / "shared" / "data" / "traces").lexically_normal();
}

std::vector<std::string> TraceNames() {
  std::vector<std::string> names;
  for (const auto& [name, path] : Catalog())
    names.push_back(name);
  return names;
}

std::string ResolveWorkload(const std::string& name_or_path) {
  std::error_code error;
  // Any file but a directory: a named pipe streams a trace (with an explicit --format).
  if (fs::exists(name_or_path, error) && !fs::is_directory(name_or_path, error))
    return name_or_path;
  const std::map<std::string, fs::path> traces = Catalog();
  if (auto found = traces.find(name_or_path); found != traces.end()) return found->second.string();
  std::vector<std::string> by_stem;
  for (const auto& [name, path] : traces) {
    if (path.stem() == name_or_path) by_stem.push_back(name);
  }
  if (by_stem.size() == 1) return traces.at(by_stem[0]).string();
  std::string known;
  for (const auto& [name, path] : traces)
    known += (known.empty() ? "" : ", ") + name;
  if (by_stem.size() > 1) {
    std::string options;
    for (const std::string& name : by_stem)
      options += (options.empty() ? "" : ", ") + name;
    throw OptionError("--workload", QuotePath(name_or_path) + " names several traces: " + options);
  }
  throw OptionError("--workload",
                    "no such file, and no trace named " + QuotePath(name_or_path) + " in " +
                        TracesDir().string() +
                        (known.empty() ? " (none there)" : " (known: " + known + ")"));
}

}  // namespace fleetsim
