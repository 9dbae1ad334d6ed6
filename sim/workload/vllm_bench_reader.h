// Streams a vLLM-bench `requests.jsonl` (one request per line: request_id, input_toks,
// output_toks, arrival_time, queued_ts, scheduled_ts, first_token_ts, last_token_ts, in
// seconds). The arrival anchor is `queued_ts` (vLLM's monotonic clock; `arrival_time` is
// wall-clock epoch time on another clock), as upstream's validate.py does.
//
//   VllmBenchReader reader("requests.jsonl");
//   while (auto r = reader.Next()) use(r->queued_s, r->input_tokens, r->output_tokens);
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "core/json_lines.h"
#include "core/sim_time.h"

namespace fleetsim {

struct VllmBenchRequest {
  std::string id;
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;
  double queued_s = 0;
  double first_token_s = 0;
  double last_token_s = 0;
  int line = 0;  // the line it was read from
};

// Requests are returned in queued_ts order. Files written by several data-parallel
// engines interleave slightly (the DP2 run has 29 inversions of under a millisecond): a
// window of kReorderWindow requests puts them back in order with bounded memory, and a
// request further out of order than that is an InputError.
class VllmBenchReader {
 public:
  static constexpr std::size_t kReorderWindow = 64;

  explicit VllmBenchReader(const std::string& path);
  // The next request; nullopt at the end. Malformed lines are InputErrors with file and
  // line.
  std::optional<VllmBenchRequest> Next();
  int line() const { return lines_.line(); }
  const std::string& path() const { return lines_.path(); }

 private:
  std::optional<VllmBenchRequest> ReadOne();

  JsonLines lines_;
  // (queued_ts, line) -> request: the window, smallest first.
  std::map<std::pair<double, int>, VllmBenchRequest> window_;
  double last_emitted_ = -1e300;
};

// `r`'s arrival in simulated time: its queued_ts less the first request's,
// `first_queued_s`; an InputError at its line (file `path`) past the largest simulated time.
SimTime ArrivalAfter(const VllmBenchRequest& r, double first_queued_s, const std::string& path);

}  // namespace fleetsim
