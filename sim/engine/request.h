// One request inside an engine instance: its token counts, where it stands, and the
// KV blocks it holds.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <new>
#include <string>
#include <vector>

#include "core/checkpoint_io.h"
#include "core/sim_time.h"
#include "engine/block_pool.h"
#include "engine/group_blocks.h"

namespace fleetsim {

enum class RequestState { kWaiting, kRunning, kFinished, kRejected };

// Fields in the order a scheduling step reads them: the first cache line holds what every
// running request is checked for each step, the next ones its blocks.
struct alignas(64) Request {
  int64_t prompt_tokens = 0;
  int64_t max_output_tokens = 0;
  int64_t num_computed = 0;
  int64_t num_output = 0;
  // How many attention blocks carry their hash (owned by the KV cache manager).
  int64_t num_hashed_blocks = 0;
  // GDN positions below this are all null (already released), so releasing skipped
  // states scans only what is new since the last step.
  int64_t gdn_scan_from = 0;
  RequestState state = RequestState::kWaiting;
  int num_preemptions = 0;
  // shared_hash_blocks(), kept here by the KV cache manager while it holds blocks (read
  // with the fields above, not from the vector's own cache line).
  int32_t num_shared_hashes = 0;
  // Whether the blocks past the shared hashes (hashes only this request produces) are in
  // the prefix-cache index: from its first preemption on, when it could hit them.
  bool private_blocks_indexed = false;
  // Whether the blocks of its conversation's history (family, below) are in the index as
  // they are hashed: once another turn of the conversation has come to this instance while
  // it holds blocks (KvCacheManager).
  bool family_blocks_indexed = false;
  // Whether its last step emitted a token, so that with speculative decoding the MTP layer
  // drafted for it (vLLM discards drafts of partial prefills).
  bool emitted_last_step = false;
  // Prefill/decode disaggregation, as vLLM's KV connector runs it (docs/DISAGGREGATION.md).
  // On a prefill instance: the request stops after its first token and keeps its blocks
  // until its KV has been sent (do_remote_decode). On a decode instance: it arrives with
  // its prompt's KV computed elsewhere, and its first admission recomputes only the last
  // prompt token (do_remote_prefill); a preempted one recomputes everything.
  bool remote_decode = false;
  bool remote_prefilled = false;

  // Owned by the KV cache manager.
  GroupBlocks blocks;

  int64_t id = 0;             // stable, unique within the run
  int64_t slot = -1;          // the instance's record slot while the request is live
  int64_t cached_tokens = 0;  // prefix hit at first admission
  std::string name;           // the workload's id, for traces and tests
  // Prefix hashes of the prompt's full blocks at the engine's block size (equal iff the
  // prompt is identical up to and including that block). Blocks past these -- output
  // tokens, or prompts without hashes -- get hashes unique to this request.
  std::vector<BlockHash> prompt_block_hashes;
  // How many of them another request can produce too, from the start (-1: all). The rest
  // are this request's alone -- the workload knows, as for a conversation's last turn past
  // its previous turn's prompt -- so, like the blocks past the hashes, only this request
  // can hit those blocks, and only after a preemption.
  int64_t shared_hash_limit = -1;
  // Its conversation (0: none), and how many of its hashes, from the start, requests of
  // other conversations can produce too (a system prompt's); the hashes past those only
  // the conversation's own turns produce. The KV cache manager caches such blocks lazily,
  // when another turn could hit them on the same instance.
  uint64_t family = 0;
  int64_t family_hash_start = -1;
  // The arrival of its conversation's last turn (WorkloadRequest::family_ends).
  SimTime family_ends = kNever;

  int64_t num_tokens() const { return prompt_tokens + num_output; }
  // Blocks whose hash another request can produce.
  int64_t shared_hash_blocks() const {
    const auto hashes = static_cast<int64_t>(prompt_block_hashes.size());
    return shared_hash_limit < 0 ? hashes : std::min(shared_hash_limit, hashes);
  }
  bool prefill_done() const { return num_computed >= num_tokens(); }
  BlockHash BlockHashAt(int64_t index) const;

  // Whole cache lines from one malloc: glibc's aligned allocation (memalign) splits a chunk
  // on every call, several hundred instructions for each request a run delivers.
  static void* operator new(std::size_t size, std::align_val_t align);
  static void operator delete(void* pointer, std::align_val_t align) noexcept;

  // Every field above (docs/CHECKPOINT.md); `groups`: the layout's group count.
  void Save(CheckpointWriter& w) const;
  void Load(CheckpointReader& r, std::size_t groups);
};

}  // namespace fleetsim
