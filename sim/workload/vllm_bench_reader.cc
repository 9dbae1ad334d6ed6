#include "workload/vllm_bench_reader.h"

#include <yaml-cpp/yaml.h>

#include "core/input_error.h"

namespace fleetsim {
namespace {

template <typename T>
T Field(const YAML::Node& row, const char* key, const std::string& path, int line) {
  const YAML::Node value = row[key];
  if (!value.IsDefined() || value.IsNull()) throw InputError(path, line, key, "missing field");
  T out{};
  if (!YAML::convert<T>::decode(value, out)) {
    throw InputError(path, line, key,
                     "expected a number, got '" + value.as<std::string>("?") + "'");
  }
  return out;
}

}  // namespace

VllmBenchReader::VllmBenchReader(const std::string& path) : path_(path), in_(path) {
  if (!in_) throw InputError(path, 0, "", "cannot open file");
}

std::optional<VllmBenchRequest> VllmBenchReader::Next() {
  std::string text;
  while (std::getline(in_, text)) {
    ++line_;
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    YAML::Node row;
    try {
      row = YAML::Load(text);
    } catch (const YAML::Exception& e) {
      throw InputError(path_, line_, "", "not a JSON object: " + e.msg);
    }
    if (!row.IsMap()) throw InputError(path_, line_, "", "not a JSON object");
    VllmBenchRequest r;
    r.id = row["request_id"] ? row["request_id"].as<std::string>() : std::to_string(line_);
    r.input_tokens = Field<int64_t>(row, "input_toks", path_, line_);
    r.output_tokens = Field<int64_t>(row, "output_toks", path_, line_);
    r.queued_s = Field<double>(row, "queued_ts", path_, line_);
    r.first_token_s = Field<double>(row, "first_token_ts", path_, line_);
    r.last_token_s = Field<double>(row, "last_token_ts", path_, line_);
    if (r.input_tokens <= 0) throw InputError(path_, line_, "input_toks", "must be positive");
    if (r.output_tokens <= 0) throw InputError(path_, line_, "output_toks", "must be positive");
    if (r.queued_s < last_queued_) {
      throw InputError(path_, line_, "queued_ts",
                       "goes back in time (requests must be in arrival order)");
    }
    last_queued_ = r.queued_s;
    return r;
  }
  return std::nullopt;
}

}  // namespace fleetsim
