#include "workload/vllm_bench_reader.h"

#include <cmath>

#include "core/format.h"
#include "core/input_error.h"

namespace fleetsim {

VllmBenchReader::VllmBenchReader(const std::string& path) : lines_(path) {}

std::optional<VllmBenchRequest> VllmBenchReader::ReadOne() {
  if (!lines_.Next()) return std::nullopt;
  VllmBenchRequest r;
  r.id = lines_.OptionalText("request_id").value_or(std::to_string(lines_.line()));
  r.input_tokens = lines_.Int("input_toks");
  r.output_tokens = lines_.Int("output_toks");
  if (r.input_tokens <= 0) lines_.Fail("input_toks", "must be positive");
  if (r.output_tokens <= 0) lines_.Fail("output_toks", "must be positive");
  r.line = lines_.line();
  r.queued_s = lines_.Number("queued_ts");
  if (!std::isfinite(r.queued_s)) lines_.Fail("queued_ts", "must be a finite number");
  r.first_token_s = lines_.Number("first_token_ts");
  r.last_token_s = lines_.Number("last_token_ts");
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

SimTime ArrivalAfter(const VllmBenchRequest& r, double first_queued_s, const std::string& path) {
  const double seconds = r.queued_s - first_queued_s;
  if (auto violation = SimSecondsViolation(seconds)) {
    throw InputError(path, r.line, "queued_ts",
                     "is " + ShortestNumber(r.queued_s) + " s, " + ShortestNumber(seconds) +
                         " s after the first request: " + *violation);
  }
  return SecondsToSimTime(seconds);
}

}  // namespace fleetsim
