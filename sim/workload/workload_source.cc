#include "workload/workload_source.h"

#include <fstream>

#include <yaml-cpp/yaml.h>

#include "core/input_error.h"
#include "core/json_lines.h"
#include "workload/vllm_bench_reader.h"

namespace fleetsim {
namespace {

class NativeJsonl : public WorkloadSource {
 public:
  explicit NativeJsonl(const std::string& path) : lines_(path) {}
  std::string format() const override { return "native"; }

  std::optional<WorkloadRequest> Next() override {
    const YAML::Node* row = lines_.Next();
    if (row == nullptr) return std::nullopt;
    return Parse(*row);
  }

 private:
  template <typename T>
  T Get(const YAML::Node& row, const char* key, bool required, T fallback) const {
    const YAML::Node value = row[key];
    if (!value.IsDefined() || value.IsNull()) {
      if (required) lines_.Fail(key, "missing field");
      return fallback;
    }
    T out{};
    if (!value.IsScalar() || !YAML::convert<T>::decode(value, out)) {
      lines_.Fail(key,
                  std::string("expected ") + (std::is_integral_v<T> ? "an integer" : "a number"));
    }
    return out;
  }

  WorkloadRequest Parse(const YAML::Node& row) {
    WorkloadRequest r;
    r.id = row["id"] && row["id"].IsScalar() ? row["id"].as<std::string>()
                                             : std::to_string(lines_.line());
    if (row["arrival_ns"]) {
      r.arrival = Get<int64_t>(row, "arrival_ns", true, 0);
    } else {
      r.arrival = SecondsToSimTime(Get<double>(row, "arrival_s", true, 0));
    }
    if (r.arrival < 0) lines_.Fail("arrival_s", "must not be negative");
    if (r.arrival < last_arrival_) {
      lines_.Fail("arrival_s", "goes back in time (the trace must be in arrival order)");
    }
    last_arrival_ = r.arrival;
    r.input_tokens = Get<int64_t>(row, "input_tokens", true, 0);
    r.output_tokens = Get<int64_t>(row, "output_tokens", true, 0);
    if (r.input_tokens <= 0) lines_.Fail("input_tokens", "must be positive");
    if (r.output_tokens <= 0) lines_.Fail("output_tokens", "must be positive");
    if (const YAML::Node hashes = row["block_hashes"]; hashes && !hashes.IsNull()) {
      if (!hashes.IsSequence()) lines_.Fail("block_hashes", "expected a list of integers");
      for (const auto& h : hashes) {
        uint64_t value = 0;
        if (!YAML::convert<uint64_t>::decode(h, value))
          lines_.Fail("block_hashes", "expected a list of integers");
        r.block_hashes.push_back(value);
      }
      r.hash_block_size = Get<int>(row, "hash_block_size", true, 0);
      if (r.hash_block_size <= 0) lines_.Fail("hash_block_size", "must be positive");
      if (static_cast<int64_t>(r.block_hashes.size()) > r.input_tokens / r.hash_block_size) {
        lines_.Fail("block_hashes", "more hashes than full prompt blocks");
      }
    }
    return r;
  }

  JsonLines lines_;
  SimTime last_arrival_ = 0;
};

class VllmBenchSource : public WorkloadSource {
 public:
  explicit VllmBenchSource(const std::string& path) : reader_(path) {}
  std::string format() const override { return "vllm-bench"; }
  std::optional<WorkloadRequest> Next() override {
    auto r = reader_.Next();
    if (!r) return std::nullopt;
    if (!origin_) origin_ = r->queued_s;
    WorkloadRequest out;
    out.id = r->id;
    out.arrival = SecondsToSimTime(r->queued_s - *origin_);
    out.input_tokens = r->input_tokens;
    out.output_tokens = r->output_tokens;
    return out;
  }

 private:
  VllmBenchReader reader_;
  std::optional<double> origin_;
};

// The format of the first non-empty line: vllm-bench rows carry queued_ts.
std::string Detect(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path, 0, "", "cannot open file");
  std::string text;
  int line = 0;
  while (std::getline(in, text)) {
    ++line;
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (text.find("\"queued_ts\"") != std::string::npos) return "vllm-bench";
    if (text.find("\"input_tokens\"") != std::string::npos) return "native";
    throw InputError(path, line, "", "unknown trace format (give --format: native, vllm-bench)");
  }
  throw InputError(path, 0, "", "empty trace");
}

}  // namespace

std::unique_ptr<WorkloadSource> OpenWorkload(const std::string& path, const std::string& format) {
  const std::string chosen = format == "auto" ? Detect(path) : format;
  if (chosen == "native") return std::make_unique<NativeJsonl>(path);
  if (chosen == "vllm-bench") return std::make_unique<VllmBenchSource>(path);
  throw OptionError("--format",
                    "unknown format '" + format + "' (accepted: auto, native, vllm-bench)");
}

}  // namespace fleetsim
