// Where requests come from: a trace read one line at a time (never loaded whole), in
// arrival order. Formats are detected from the first record's keys, or chosen by name.
//
//   native JSONL (fleetsim's own), one object per line:
//     {"id": "r1", "arrival_s": 0.25, "input_tokens": 812, "output_tokens": 128,
//      "block_hashes": [11, 12], "hash_block_size": 16}
//     arrival_s (or arrival_ns) since the start of the trace; id, block_hashes and
//     hash_block_size are optional. block_hashes are per full prompt block of
//     hash_block_size tokens, equal iff the prompt is identical through that block.
//   vllm-bench: requests.jsonl of a vLLM-bench run (arrival = queued_ts, rebased to 0).
//
//   auto source = OpenWorkload("trace.jsonl", "auto");
//   while (auto r = source->Next()) ...
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/sim_time.h"

namespace fleetsim {

struct WorkloadRequest {
  std::string id;
  SimTime arrival = 0;
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;
  std::vector<uint64_t> block_hashes;
  int hash_block_size = 0;  // 0: no hashes
};

class WorkloadSource {
 public:
  virtual ~WorkloadSource() = default;
  // The next request in arrival order; nullopt at the end.
  virtual std::optional<WorkloadRequest> Next() = 0;
  virtual std::string format() const = 0;
};

// `format`: auto, native or vllm-bench. Unknown formats and unreadable files are
// InputErrors; so is a malformed line, with its line number and field.
std::unique_ptr<WorkloadSource> OpenWorkload(const std::string& path, const std::string& format);

}  // namespace fleetsim
