// The hybrid KV cache manager of one engine instance (vLLM v1 kv_cache_manager.py,
// kv_cache_coordinator.py, single_type_kv_cache_manager.py): per-group block needs over
// one shared BlockPool, prefix-cache lookup, and GDN state checkpoints.
//
// Attention groups hold cdiv(tokens, block) blocks. A GDN group holds, in mode "none",
// one state block for the whole request; in mode "align", the block being written plus
// the last checkpoint at a block boundary (older positions are freed, keeping their hash).
// Attention blocks are hashed when allocated (as vLLM does, so a request admitted later in
// the same step may hit them); a GDN checkpoint is hashed when its step completes, so it
// cannot be hit in the step that writes it.
//
// Prefix-cache work only where a hit is possible: an attention block past the prompt's
// workload hashes has a hash only its own request produces (Request::BlockHashAt), and so
// has one past the hashes the workload marks as shared (Request::shared_hash_limit); only
// that request can hit it, and only after a preemption. Such blocks enter the index when
// their request is first preempted (Preempt), and from then on as they are hashed; until
// then they cost no index work, and a request that finishes unpreempted leaves them
// anonymous in the free queue. Every lookup gives what hashing them all would have given.
//
// A conversation's history is cached lazily. The blocks of a turn past the hashes other
// conversations can produce (Request::family_hash_start: past its system prompt) can be hit
// only by the same conversation's later turns -- and those come to this instance seldom,
// since routers pick instances by load. So such blocks are held anonymously, and go back
// to the free queue as anonymous ones whose numbers there (BlockPool::anonymous_pushed)
// the conversation's record keeps -- their numbers and positions only. When another turn
// of the conversation comes to be looked up here (PrepareLookup), the record's blocks
// still queued are cached in their places, and a turn still holding such blocks has them
// cached, as they would have been all along: both turns then cache as they hash. Nothing
// but that conversation's turns can tell the difference, and they look only after it is
// made good: the order in which cached blocks are evicted, every hit and every count stay
// vLLM's. A record whose blocks have all been taken from the queue is forgotten.
//
// A record keeps no hashes: a conversation's turns agree on every block both have
// (WorkloadRequest::family), so the turn that comes back names the record's blocks with its
// own. Should it be shorter than the record (an earlier turn, preempted and looked up
// again), it names those it has and the rest wait, still recorded, for a longer turn --
// the only requests that can produce their hashes.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/block_pool.h"
#include "engine/family_table.h"
#include "engine/kv_cache_layout.h"
#include "engine/request.h"

namespace fleetsim {

// A prefix-cache hit for a waiting request: tokens and, per group, the blocks it reuses
// (attention: every hit block; GDN: the checkpoint at the hit boundary).
struct PrefixHit {
  int64_t tokens = 0;
  std::vector<std::vector<BlockId>> blocks;
};

class KvCacheManager {
 public:
  KvCacheManager(const KvCacheLayout& layout, int64_t num_blocks, bool prefix_caching);

  // Before a waiting request's lookup (FindLongestHit): its conversation's blocks on this
  // instance are cached as they would have been all along (see the header), and from then
  // on both turns cache as they hash.
  void PrepareLookup(Request& request);
  // After Load, with the instance's live requests: which hold conversation blocks lazily.
  void RestoreFamilyHolders(const std::vector<Request*>& live, CheckpointReader& r);
  // Forgets the records of conversations whose every turn has reached its instance --
  // each arrived before `arrived_before` (Request::family_ends) -- and none of which is
  // here (`live_families`, sorted: the families of the requests this instance holds or
  // will admit): no turn will look them up. Their blocks stay anonymous in the queue,
  // which no one can tell. Frees the room the records took.
  void ForgetEndedRecords(SimTime arrived_before, const std::vector<uint64_t>& live_families);
  bool has_family_records() const { return records_head_ < records_.size(); }
  // Conversation records kept, and how often one (or a turn's held blocks) was made good.
  int64_t family_records() const;
  int64_t family_catch_ups() const { return family_catch_ups_; }
  // Turns looked up beside a record reaching past their own hashes (an earlier turn, back
  // after a preemption): the rest of the record waited for a longer turn.
  int64_t family_short_lookups() const { return family_short_lookups_; }

  // Longest hit: whole cached blocks from the start, capped at num_tokens - 1; for a
  // hybrid, trimmed back to the last block every GDN group holds a checkpoint for.
  PrefixHit FindLongestHit(const Request& request) const;
  // The same into `hit`, reusing its lists' room.
  void FindLongestHit(const Request& request, PrefixHit& hit) const;

  // Makes room for `num_new_tokens` more tokens of `request` (a waiting request passes its
  // hit; a running one an empty hit). With `full_sequence_must_fit`, admission also needs
  // blocks for the whole current sequence to be free. False, with nothing changed, when
  // the pool is short. `lookahead_tokens` more attention slots are held past them (capped
  // at max_model_len), for draft tokens a speculative step may keep (vLLM
  // allocate_slots' num_lookahead_tokens); GDN state slots do not depend on them.
  bool Allocate(Request& request, int64_t num_new_tokens, const PrefixHit& hit,
                bool full_sequence_must_fit, int64_t lookahead_tokens = 0);

  // After a step computed tokens up to request.num_computed: caches a GDN checkpoint
  // when the step ended on a block boundary.
  void CommitStep(Request& request);

  // Decode steps in bulk (Instance's event-driven decode). For a decoding request whose
  // last Allocate was for its current num_computed: how many decode steps it takes before
  // the first whose Allocate or CommitStep can change the pool or the index (a new block,
  // a GDN state released, a block hashed into the index, a checkpoint cached); 0 when the
  // next one can. Steps in between may skip both calls.
  int64_t DecodeStepsWithoutPoolWork(const Request& request) const;
  // Free blocks the request's next decode step takes (Allocate's own count).
  int64_t DecodeBlocksNeeded(const Request& request) const { return BlocksToContinue(request, 1); }
  // Free blocks Allocate takes for `num_new_tokens` more tokens of a running request (no
  // hit, no lookahead), counted before it frees the request's skipped GDN states -- which
  // only adds free blocks, so Allocate succeeds when this many are free.
  int64_t BlocksToContinue(const Request& request, int64_t num_new_tokens) const;
  // When every decode step of the request from here on takes only anonymous blocks at its
  // boundaries -- one per attention group, nothing else, no hashing (no GDN state in
  // align mode, no hash another request or its own preemption could hit) -- how many per
  // boundary; 0 otherwise. Such steps can be taken as counts (TakeAnonymousDecodeBlocks)
  // and the blocks listed later (ListAnonymousDecodeBlocks).
  int64_t AnonymousDecodeBlocks(const Request& request) const;
  // Takes `n` anonymous blocks from the pool for decode boundaries (false, nothing
  // taken, when fewer are free).
  bool TakeAnonymousDecodeBlocks(int64_t n) { return pool_.AllocateAnonymous(n); }
  // Lists `boundaries` boundaries' anonymous blocks in the request's attention groups.
  void ListAnonymousDecodeBlocks(Request& request, int64_t boundaries) const;
  // After decode steps that skipped Allocate: the hashed-block count Allocate would have
  // left, as of request.num_computed.
  void CatchUpHashedBlocks(Request& request) const;

  // Frees GDN state blocks before the one holding the request's current state -- what
  // every allocation does first; idempotent.
  void ReleaseSkippedStates(Request& request) { FreeSkippedStates(request); }

  // Releases every block of the request, its last blocks first.
  void Free(Request& request);
  // Releases them as a preemption does: first indexing the request's private blocks, which
  // it may hit when it runs again.
  void Preempt(Request& request);

  int64_t num_free_blocks() const { return pool_.num_free(); }
  // Holds back `n` free blocks from allocations (BlockPool::Reserve); 0 lifts it.
  void Reserve(int64_t n) { pool_.Reserve(n); }
  int64_t num_usable_blocks() const { return pool_.num_blocks() - 1; }
  double Usage() const { return pool_.Usage(); }
  const KvCacheLayout& layout() const { return layout_; }
  const BlockPool& pool() const { return pool_; }
  // The pool's state and the conversations' records (the rest is the layout, fixed at
  // construction; the holders come back with RestoreFamilyHolders).
  void Save(CheckpointWriter& w) const;
  void Load(CheckpointReader& r);

 private:
  // Allocate's shortcut for a decode step (one token, no hit, no lookahead) that needs no
  // pool work -- most of them: brings the hashed-block count up, as the full path would,
  // and returns true; false when the full path must run.
  bool AllocateDecodeWithoutPoolWork(Request& request, int64_t num_new_tokens, const PrefixHit& hit,
                                     bool full_sequence_must_fit, int64_t lookahead_tokens) const;
  bool IsAttention(std::size_t group) const;
  int64_t CeilDiv(int64_t tokens) const { return (tokens + block_size_ - 1) / block_size_; }
  // Attention blocks of `request` whose hash can be in the index (see the header); while
  // it holds blocks.
  int64_t IndexableBlocks(const Request& request) const {
    return request.private_blocks_indexed ? INT64_MAX : request.num_shared_hashes;
  }
  // How many blocks ahead a loop over a request's hashes prefetches their index lines:
  // enough to overlap several misses, few enough that a lookup run that stops at its
  // first miss wastes little.
  static constexpr int64_t kPrefetchAhead = 8;
  // At block `index` of a loop over blocks [begin, end) of `request`, prefetches the
  // index lines of the blocks kPrefetchAhead on (all of the first ones, at the start).
  void PrefetchKeys(const Request& request, int64_t begin, int64_t index, int64_t end) const {
    const int64_t from = index == begin ? begin : index + kPrefetchAhead;
    const int64_t to = std::min(end, index + kPrefetchAhead + 1);
    for (int64_t at = from; at < to; ++at) {
      const BlockHash hash = request.BlockHashAt(at);
      for (std::size_t g = 0; g < layout_.groups.size(); ++g)
        if (IsAttention(g)) pool_.Prefetch({hash, static_cast<int>(g)});
    }
  }
  // Frees GDN positions before the one holding the state after `num_computed` tokens.
  void FreeSkippedStates(Request& request);
  // Free blocks group `group` takes to reach `total_tokens` (`check_tokens` for the
  // whole-sequence admission check; `slot_tokens`, at least `total_tokens`, the attention
  // slots with lookahead); `hit_positions` = hit tokens / block size.
  int64_t BlocksNeeded(const Request& request, std::size_t group, int64_t total_tokens,
                       int64_t check_tokens, const std::vector<BlockId>& hit, int64_t hit_positions,
                       int64_t slot_tokens) const;

  // Whether `request`'s conversation blocks are held anonymously until another turn comes.
  bool DefersFamily(const Request& request) const {
    return defer_families_ && request.family != 0 && request.family_hash_start >= 0 &&
           !request.family_blocks_indexed && !request.private_blocks_indexed &&
           !request.remote_decode && !request.remote_prefilled;
  }
  // Caches a held request's hashed blocks past those in the index (num_shared_hashes), up
  // to position `limit`: all of them before a preemption, its conversation's when another
  // turn comes.
  void IndexHeldBlocks(Request& request, int64_t limit);
  // A conversation on this instance: the turn holding its blocks anonymously, or the
  // record of those a finished turn left in the free queue -- never both (a turn looked
  // up beside either makes it good). 24 bytes: a table slot is half a cache line.
  struct Family {
    Request* holder = nullptr;
    // The record (serial 0: none): the finished turn's block positions [first, end) went
    // back anonymously, the last first; records_ has their numbers.
    int32_t first = 0;
    int32_t end = 0;
    uint64_t serial = 0;
  };
  // A record in the order records were made, which is the order of their numbers: the
  // block at the record's `first` has anonymous number `top`, the one at first + k number
  // top - k (top -1: the record was made good or forgotten).
  struct RecordRef {
    uint64_t family = 0;
    uint64_t serial = 0;
    int64_t top = -1;
    SimTime ends = 0;  // the conversation's last turn's arrival
  };
  // The conversation whose blocks `request` holds lazily, if it does.
  Family* FamilyHeldBy(const Request& request);
  // Caches the record's blocks still queued that `looker` (a turn of its conversation)
  // has hashes for, in their places; later records' numbers drop by as many. True when
  // it cached any. The record ends (family.serial 0) unless some of its queued blocks lie
  // past the looker's hashes; those stay recorded.
  bool CatchUpRecord(Family& family, const Request& looker);
  // Forgets the oldest records whose blocks have all left the queue.
  void ForgetPoppedRecords();
  // The record of `serial` in records_.
  RecordRef& RecordOf(uint64_t serial);

  KvCacheLayout layout_;
  int64_t block_size_;
  bool prefix_caching_;
  bool align_;
  bool has_attention_ = false;
  // Lazy conversation blocks: with prefix caching, one full-attention group only.
  bool defer_families_ = false;
  BlockPool pool_;
  FamilyTable<Family> families_;
  std::vector<RecordRef> records_;  // from records_head_ on, by serial (a deque allocates)
  std::size_t records_head_ = 0;
  uint64_t next_serial_ = 1;
  int64_t family_catch_ups_ = 0;  // not saved: counts for tests and benchmarks
  int64_t family_short_lookups_ = 0;
};

}  // namespace fleetsim
