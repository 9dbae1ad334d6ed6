#include "workload/vllm_bench_reader.h"

namespace fleetsim {
namespace {

double Number(const JsonLines& lines, const YAML::Node& row, const char* key) {
  const YAML::Node value = row[key];
  if (!value.IsDefined() || value.IsNull()) lines.Fail(key, "missing field");
  double out = 0;
  if (!value.IsScalar() || !YAML::convert<double>::decode(value, out)) {
    lines.Fail(key, "expected a number");
  }
  return out;
}

int64_t Tokens(const JsonLines& lines, const YAML::Node& row, const char* key) {
  const YAML::Node value = row[key];
  int64_t out = 0;
  if (!value.IsDefined() || !value.IsScalar() || !YAML::convert<int64_t>::decode(value, out)) {
    lines.Fail(key, "expected an integer");
  }
  if (out <= 0) lines.Fail(key, "must be positive");
  return out;
}

}  // namespace

VllmBenchReader::VllmBenchReader(const std::string& path) : lines_(path) {}

std::optional<VllmBenchRequest> VllmBenchReader::Next() {
  const YAML::Node* row = lines_.Next();
  if (row == nullptr) return std::nullopt;
  VllmBenchRequest r;
  r.id =
      (*row)["request_id"] ? (*row)["request_id"].as<std::string>() : std::to_string(lines_.line());
  r.input_tokens = Tokens(lines_, *row, "input_toks");
  r.output_tokens = Tokens(lines_, *row, "output_toks");
  r.queued_s = Number(lines_, *row, "queued_ts");
  r.first_token_s = Number(lines_, *row, "first_token_ts");
  r.last_token_s = Number(lines_, *row, "last_token_ts");
  if (r.queued_s < last_queued_) {
    lines_.Fail("queued_ts", "goes back in time (requests must be in arrival order)");
  }
  last_queued_ = r.queued_s;
  return r;
}

}  // namespace fleetsim
