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
  // The last hash stands for a partial block too (Mooncake hashes every started block).
  bool hashes_cover_partial_block = false;
};

class WorkloadSource {
 public:
  virtual ~WorkloadSource() = default;
  // The next request in arrival order; nullopt at the end.
  virtual std::optional<WorkloadRequest> Next() = 0;
  virtual std::string format() const = 0;
  // At most this many requests will come, when the source knows (a generator's
  // num_requests, a --num-reqs window): for progress estimates only.
  virtual std::optional<int64_t> expected_requests() const { return std::nullopt; }
};

// Engine-block prefix hashes from a trace's hashes at another block size. Engine block i
// (tokens [i*B, (i+1)*B)) is shared by two requests when the trace block holding its last
// token is -- the trace's ids are prefix-identifying -- so its hash is that trace block's
// id mixed with i. This is conservative: two prompts identical through an engine block
// but not through the rest of the trace block are not counted as sharing it. Only engine
// blocks inside the hashed, full part of the prompt get hashes; later ones are unique.
std::vector<uint64_t> MapBlockHashes(const WorkloadRequest& request, int engine_block_size);

// `format`: auto, native, vllm-bench, azure, vidur, mooncake, or generator (a YAML spec
// with a top-level `generator:`, see generator.h). Unknown formats and unreadable
// files are InputErrors; so is a malformed line, with its line number and field.
std::unique_ptr<WorkloadSource> OpenWorkload(const std::string& path, const std::string& format);

}  // namespace fleetsim
