// The vLLM v1 scheduler step (v1/core/sched/scheduler.py, Scheduler.schedule), FCFS,
// as ENGINE_SEMANTICS.md section 4 states it:
//   1. running requests in list order, each given its next chunk under the token budget;
//      when blocks run short the LAST running request is preempted (recompute: its blocks
//      are freed and it goes back to the front of the waiting queue);
//   2. waiting requests, only if nothing was preempted this step, while the budget,
//      max_num_seqs and the pool allow; a new request's whole sequence must fit.
// With a hybrid model in mamba "align" mode, prefill chunks are floored to block
// boundaries so that GDN checkpoints land on them.
// With speculative decoding (engine/speculative.h) a decoding request schedules its token
// and its k drafts (vLLM: num_tokens_with_spec - num_computed_tokens), counted in the token
// budget, with k lookahead slots held past them; rejected drafts are rolled back from
// num_computed when the step completes, and the step emits the accepted drafts + 1.
//
//   Scheduler scheduler(config, kv_cache);
//   scheduler.Add(&request);
//   const StepPlan& plan = scheduler.Schedule();   // what the next forward pass computes
//   ... charge plan's time ...
//   scheduler.Complete(plan);                      // advance, emit tokens, finish, free
//
// The plan and the finished list live in the scheduler and are refilled each step (their
// room is kept), so a step allocates nothing.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <string_view>
#include <vector>

#include "engine/kv_cache_manager.h"
#include "engine/request.h"
#include "engine/speculative.h"

namespace fleetsim {

struct SchedulerConfig {
  int64_t max_num_batched_tokens = 8192;
  int max_num_seqs = 1024;
  int64_t max_model_len = 0;
  int64_t long_prefill_token_threshold = 0;  // 0: off
  bool chunked_prefill = true;
  SpeculativeDecoding speculative;  // off by default
  // vLLM's async scheduling: the engine hides a step's finishes from the next schedule
  // (Instance::HideLastFinishes). Off here, the bare scheduler's semantics; the engine
  // setting's default is on.
  bool async_scheduling = false;
};

struct ScheduledChunk {
  Request* request = nullptr;
  int64_t num_tokens = 0;       // tokens computed this step
  int64_t computed_before = 0;  // the request's computed tokens before this step
  bool admitted = false;        // came from the waiting queue this step
  int64_t cached_tokens = 0;    // prefix hit at admission
  int64_t output_before = 0;    // the request's output tokens before this step
  int64_t drafts = 0;           // draft tokens verified this step (speculative decoding)
};

struct StepPlan {
  std::vector<ScheduledChunk> chunks;
  std::vector<Request*> preempted;
  int64_t total_tokens = 0;
  bool empty() const { return chunks.empty(); }
};

// A prefill chunk floored to block boundaries in mamba "align" mode, so that the GDN
// state is written on a boundary (ENGINE_SEMANTICS.md section 4): below the last boundary
// a chunk is cut to whole blocks (possibly 0); one that would cross the last boundary
// stops on it; the final tail past it runs as it is. Decode steps are never cut.
int64_t AlignedChunk(int64_t prompt_tokens, int64_t num_tokens, int64_t computed, int64_t n,
                     int64_t block_size);

// The tokens a waiting request counts as computed when admitted: its prefix-cache hit, or
// -- at the first admission of a request whose prompt a prefill instance computed -- all
// but the last token (vLLM's KV connector, docs/DISAGGREGATION.md).
int64_t ComputedAtAdmission(const Request& request, int64_t hit_tokens);

// Why a request was refused at arrival instead of being queued.
enum class RejectReason { kNone, kPromptTooLong, kExceedsKvCache };
std::string_view NameOf(RejectReason reason);

class Scheduler {
 public:
  Scheduler(const SchedulerConfig& config, KvCacheManager& kv_cache);

  // Queues a request at the back of the waiting queue -- unless it could never run: a
  // prompt that leaves no room for an output token within max_model_len, or a request
  // that alone, at its longest, needs more blocks than the pool has. Such a request
  // ends as kRejected with the reason, and is never queued.
  RejectReason Add(Request* request);
  // Valid until the next call.
  const StepPlan& Schedule();
  // Advances every scheduled request by its chunk; a request whose prompt is computed
  // emits one token; those done (output length or max_model_len) are freed and returned
  // (valid until the next call).
  const std::vector<Request*>& Complete(const StepPlan& plan);

  // Draft tokens verified and accepted in the step Complete last settled.
  int64_t step_drafts() const { return step_drafts_; }
  int64_t step_accepted() const { return step_accepted_; }

  const std::vector<Request*>& running() const { return running_; }
  // Advances one scheduled request by its chunk, as Complete does for each: true when it
  // finished (and was freed); the caller drops it from the running list (DropFinished).
  bool Advance(const ScheduledChunk& chunk);

  // For an instance's decode run (Instance::FastDecode), whose first `decodes` running
  // requests decode (their blocks allocated in bulk by the run), the rest -- its tail --
  // scheduled one by one: the free blocks the tail's chunks take at most this step
  // (KvCacheManager::BlocksToContinue for each chunk Schedule would give it).
  int64_t TailBlocks(int64_t decodes) const;
  // Whether every waiting request Schedule's waiting loop could reach is one a decode run
  // admits as that loop would: not computed or decoded elsewhere (prefill/decode
  // disaggregation's requests take the ordinary step).
  bool RunCanAdmit() const;
  // A decode run's step, after the decodes' blocks are allocated: Schedule past them --
  // the tail's chunks, then waiting requests (the caller made sure the pool has room for
  // the tail, TailBlocks, so nothing is preempted). Valid until the next call.
  const StepPlan& PlanRunStep(int64_t decodes);
  // Drops from the running list the requests a caller finished and freed in its place
  // (Instance's decode runs, which settle a step's finishes as Complete would).
  void DropFinished();
  // Finished requests the next schedule counts against max_num_seqs, as vLLM's running
  // list still held them when it scheduled (async scheduling); 0 lifts it.
  void Hold(int64_t finished) { held_ = finished; }
  // The blocks the requests Complete last finished returned to the pool.
  int64_t step_freed_blocks() const { return step_freed_blocks_; }
  const std::deque<Request*>& waiting() const { return waiting_; }
  bool idle() const { return running_.empty() && waiting_.empty(); }

  // The queues, each request as `index_of` numbers it (the plan and the finished list
  // are refilled every step: nothing to save); Load takes the requests by that number.
  void Save(CheckpointWriter& w, const std::function<int64_t(const Request*)>& index_of) const;
  void Load(CheckpointReader& r, const std::vector<Request*>& requests);

 private:
  int64_t AlignedSplit(const Request& request, int64_t computed, int64_t n) const;
  // Schedule with the first `first` running requests left to the caller (a decode run's
  // lanes, a token each).
  const StepPlan& ScheduleFrom(std::size_t first);
  // The chunk Schedule gives a running request under `budget` (0 or less: none).
  int64_t RunningChunk(const Request& request, int64_t budget) const;
  // Schedule's admission of the front waiting request under `budget` (taken from it):
  // false when it is not admitted, which ends admission for the step.
  bool AdmitFront(int64_t& budget);
  void Preempt(Request* victim);
  // The draft tokens a running request carries into its next step: k once it decodes (the
  // MTP layer drafted them in its last step), else none.
  int64_t DraftsOf(const Request& request) const;
  // Settles a speculative chunk's drafts: rolls the rejected ones back from num_computed
  // and returns the tokens the step emits (accepted + 1).
  int64_t SettleDrafts(const ScheduledChunk& chunk);

  SchedulerConfig config_;
  KvCacheManager& kv_cache_;
  bool align_;
  int64_t block_size_;
  std::vector<Request*> running_;
  std::deque<Request*> waiting_;
  StepPlan plan_;
  std::vector<Request*> finished_;
  PrefixHit hit_;
  const PrefixHit no_hit_;
  int64_t step_drafts_ = 0;
  int64_t step_accepted_ = 0;
  int64_t held_ = 0;
  int64_t step_freed_blocks_ = 0;
};

}  // namespace fleetsim
