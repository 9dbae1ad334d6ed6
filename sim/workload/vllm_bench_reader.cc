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

std::optional<VllmBenchRequest> VllmBenchReader::ReadOne() {
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
  if (r.queued_s < last_emitted_) {
    lines_.Fail("queued_ts", "is earlier than a request " + std::to_string(kReorderWindow) +
                                 " or more lines before it (requests must be in arrival order)");
  }
  return r;
}

std::optional<VllmBenchRequest> VllmBenchReader::Next() {
  while (window_.size() < kReorderWindow) {
    std::optional<VllmBenchRequest> r = ReadOne();
    if (!r) break;
    window_.emplace(std::make_pair(r->queued_s, lines_.line()), std::move(*r));
  }
  if (window_.empty()) return std::nullopt;
  auto first = window_.begin();
  VllmBenchRequest out = std::move(first->second);
  window_.erase(first);
  last_emitted_ = out.queued_s;
  return out;
}

}  // namespace fleetsim
