// Where requests come from: a trace read one line at a time (never loaded whole), in
// arrival order. Formats are detected from the first record's keys, or chosen by name.
//
//   native JSONL (fleetsim's own), one object per line:
//     {"id": "r1", "arrival_s": 0.25, "input_tokens": 812, "output_tokens": 128,
//      "block_hashes": [11, 12], "hash_block_size": 16, "model": "llama-3.1-70b"}
//     arrival_s (or arrival_ns) since the start of the trace; id, block_hashes,
//     hash_block_size and model are optional. block_hashes are per full prompt block of
//     hash_block_size tokens, equal iff the prompt is identical through that block. A
//     model (1 to kMaxModelNameBytes bytes) sends the request only to instance groups
//     serving that model; without one it may go to any group.
//   vllm-bench: requests.jsonl of a vLLM-bench run (arrival = queued_ts, rebased to 0).
//
//   auto source = OpenWorkload("trace.jsonl", "auto");
//   while (auto r = source->Next()) ...
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/sim_time.h"

namespace fleetsim {

// The most bytes a request's model name has (a served model name has fewer: it names a
// /summary row).
inline constexpr std::size_t kMaxModelNameBytes = 64;

struct WorkloadRequest {
  std::string id;
  // The model the request asks for; empty: any instance group may serve it.
  std::string model;
  // Where it was read: the trace line, or the spec line naming its model for a generated
  // request (0: unknown). For errors only; it does not travel between ranks.
  int line = 0;
  SimTime arrival = 0;
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;
  std::vector<uint64_t> block_hashes;
  // How many of block_hashes, from the first, another request can produce too (-1: all).
  // The rest are this request's alone (a generated conversation's last turn, past what its
  // earlier turns sent), so no other request can hit its blocks: the engine keeps them out
  // of the prefix index unless the request itself could hit them (after a preemption).
  int64_t shared_hashes = -1;
  // Its conversation (0: none): the hashes from family_hashes_from on can be produced only
  // by requests of the same family -- a conversation's turns, past the system prompt all
  // of them share -- so the engine caches those blocks only when another turn could hit
  // them on the same instance (KvCacheManager). A family's requests must agree on every
  // hash position both have (a conversation only grows): the engine names a finished
  // turn's blocks with a later turn's hashes.
  uint64_t family = 0;
  int64_t family_hashes_from = -1;
  // The arrival of its family's last request (kNever: not known): once every request
  // arriving before it has reached its instance, an instance holding none of the family's
  // requests will see no more of them, and forgets what it kept for them.
  SimTime family_ends = kNever;
  int hash_block_size = 0;  // 0: no hashes
  // The last hash stands for a partial block too (Mooncake hashes every started block).
  bool hashes_cover_partial_block = false;
};

// The stopping rules a generator spec and a window share: at most `limit` requests, none
// arriving at or after `duration`. Arrivals come in order, so the first past the duration
// ends the stream.
class StopRule {
 public:
  StopRule(std::optional<int64_t> limit, std::optional<SimTime> duration)
      : limit_(limit), duration_(duration) {}
  bool Ended() const { return done_ || (limit_ && taken_ >= *limit_); }
  // Counts the request arriving at `arrival`; false, and the stream ended, for one past the
  // duration or none (the source ended).
  bool Admit(std::optional<SimTime> arrival) {
    if (!arrival || (duration_ && *arrival >= *duration_)) {
      done_ = true;
      return false;
    }
    ++taken_;
    return true;
  }

 private:
  std::optional<int64_t> limit_;
  std::optional<SimTime> duration_;
  int64_t taken_ = 0;
  bool done_ = false;
};

class WorkloadSource {
 public:
  virtual ~WorkloadSource() = default;
  // The next request in arrival order; nullopt at the end.
  virtual std::optional<WorkloadRequest> Next() = 0;
  virtual std::string format() const = 0;
  // The file it reads, for errors about a request ("" when none).
  virtual std::string path() const { return {}; }
  // At most this many requests will come, when the source knows (a generator's
  // num_requests, a --num-reqs window): for progress estimates only.
  virtual std::optional<int64_t> expected_requests() const { return std::nullopt; }

  // Whether PassOver works: the source can move past a request without making it and
  // still make every later one as Next() would (a generator: of independent requests, or
  // of sessions, whose turns depend on their own session alone), so a reader may take
  // only the arrival of a request it does not need. Then every rank of a fleet run reads the
  // workload and makes only its own gateways' requests (docs/DESIGN.md, "Readers").
  virtual bool can_pass_over() const { return false; }
  // The next request's arrival, without making the rest of it; nullopt at the end. The
  // requests after it are the same as if Next() had made it. Only where can_pass_over().
  virtual std::optional<SimTime> PassOver();
};

// Engine-block prefix hashes from a trace's hashes at another block size. Engine block i
// (tokens [i*B, (i+1)*B)) is shared by two requests when the trace block holding its last
// token is -- the trace's ids are prefix-identifying -- so its hash is that trace block's
// id mixed with i. This is conservative: two prompts identical through an engine block
// but not through the rest of the trace block are not counted as sharing it. Only engine
// blocks inside the hashed, full part of the prompt get hashes; later ones are unique.
std::vector<uint64_t> MapBlockHashes(const WorkloadRequest& request, int engine_block_size);
// The same, taking the request's own hashes where the block sizes match.
std::vector<uint64_t> MapBlockHashes(WorkloadRequest&& request, int engine_block_size);
// How many of those another request can produce (-1: all): engine block i's hash is its
// last token's trace block's, so it is shared iff that trace block's is.
int64_t MapSharedHashes(const WorkloadRequest& request, int engine_block_size);
// Where its family's own hashes begin at the engine's block size (-1: no family), alike.
int64_t MapFamilyHashes(const WorkloadRequest& request, int engine_block_size);

// Why `name` cannot be a model name (empty, over kMaxModelNameBytes, a control
// character), or nullopt when it can.
std::optional<std::string> ModelNameViolation(std::string_view name);

// `format`: auto, native, vllm-bench, azure, vidur, mooncake, or generator (a YAML spec
// with a top-level `generator:`, see generator.h). Unknown formats and unreadable
// files are InputErrors; so is a malformed line, with its line number and field.
std::unique_ptr<WorkloadSource> OpenWorkload(const std::string& path, const std::string& format);

}  // namespace fleetsim
