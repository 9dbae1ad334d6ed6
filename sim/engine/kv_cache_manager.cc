#include "engine/kv_cache_manager.h"

#include <algorithm>
#include <utility>

namespace fleetsim {

KvCacheManager::KvCacheManager(const KvCacheLayout& layout, int64_t num_blocks, bool prefix_caching)
    : layout_(layout),
      block_size_(layout.block_size),
      prefix_caching_(prefix_caching),
      align_(layout.mamba_mode == MambaCacheMode::kAlign),
      pool_(num_blocks) {
  for (std::size_t g = 0; g < layout_.groups.size(); ++g)
    has_attention_ = has_attention_ || IsAttention(g);
  defer_families_ = prefix_caching_ && layout_.groups.size() == 1 && IsAttention(0);
}

void KvCacheManager::Save(CheckpointWriter& w) const {
  pool_.Save(w);
  // The records oldest first, so that equal managers write equal files.
  std::vector<const RecordRef*> kept;
  for (std::size_t i = records_head_; i < records_.size(); ++i) {
    if (records_[i].top >= 0) kept.push_back(&records_[i]);
  }
  w.U64(kept.size());
  for (const RecordRef* ref : kept) {
    const Family& family = *families_.Find(ref->family);
    w.U64(ref->family);
    w.I64(family.first);
    w.I64(family.end);
    w.I64(ref->top);
    w.I64(ref->ends);
  }
}

void KvCacheManager::Load(CheckpointReader& r) {
  pool_.Load(r);
  families_.Clear();
  records_.clear();
  records_head_ = 0;
  const uint64_t count = r.U64();
  int64_t below = -1;
  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t id = r.U64();
    const int64_t first = r.I64();
    const int64_t end = r.I64();
    const int64_t top = r.I64();
    const SimTime ends = r.I64();
    // Each record's numbers, top - (end - first) + 1 to top, after the last record's.
    r.Require(defer_families_ && id != 0 && first >= 0 && first < end && end <= INT32_MAX &&
                  top - (end - first) >= below && top < pool_.anonymous_pushed() &&
                  families_.Find(id) == nullptr,
              "a conversation's record");
    below = top;
    Family family;
    family.first = static_cast<int32_t>(first);
    family.end = static_cast<int32_t>(end);
    family.serial = next_serial_++;
    records_.push_back({id, family.serial, top, ends});
    families_.Insert(id) = family;
  }
}

void KvCacheManager::RestoreFamilyHolders(const std::vector<Request*>& live, CheckpointReader& r) {
  for (Request* request : live) {
    // As Allocate registers them: holding blocks, its conversation's not in the index.
    if (!DefersFamily(*request) || request->blocks.empty() || request->blocks[0].empty() ||
        request->num_shared_hashes >= request->shared_hash_blocks())
      continue;
    Family& family = families_.Insert(request->family);
    r.Require(family.holder == nullptr && family.serial == 0,
              "one turn of a conversation holds its blocks lazily, and then it has no record");
    family.holder = request;
  }
}

int64_t KvCacheManager::family_records() const {
  int64_t records = 0;
  for (std::size_t i = records_head_; i < records_.size(); ++i)
    records += records_[i].top >= 0 ? 1 : 0;
  return records;
}

void KvCacheManager::PrepareLookup(Request& request) {
  if (!defer_families_ || request.family == 0) return;
  Family* found = families_.Find(request.family);
  if (found == nullptr) return;
  Family& family = *found;
  FLEETSIM_CHECK(family.holder != &request, "a turn holding blocks is not looked up");
  bool caught_up = false;
  if (Request* holder = family.holder; holder != nullptr) {
    IndexHeldBlocks(*holder, holder->shared_hash_blocks());
    holder->num_shared_hashes = static_cast<int32_t>(holder->shared_hash_blocks());
    holder->family_blocks_indexed = true;
    caught_up = true;
  }
  if (family.serial != 0) caught_up = CatchUpRecord(family, request) || caught_up;
  // A record still kept holds blocks past this turn's hashes, for a longer turn.
  const bool recorded = family.serial != 0;
  if (recorded) {
    ++family_short_lookups_;
  } else {
    families_.Erase(request.family);
  }
  // The turns' blocks are cached as they are hashed from here on (and a turn cannot hold
  // blocks lazily beside a record).
  if (caught_up || recorded) request.family_blocks_indexed = true;
  if (caught_up) ++family_catch_ups_;
}

void KvCacheManager::IndexHeldBlocks(Request& request, int64_t limit) {
  // In their order, past those in the index: a conversation's earlier turns may have
  // cached some of these hashes too, and these go after theirs, as vLLM would have put
  // them when it hashed them.
  for (std::size_t g = 0; g < layout_.groups.size() && g < request.blocks.size(); ++g) {
    if (!IsAttention(g)) continue;
    auto& blocks = request.blocks[g];
    const int64_t end =
        std::min({request.num_hashed_blocks, static_cast<int64_t>(blocks.size()), limit});
    for (int64_t i = request.num_shared_hashes; i < end; ++i) {
      BlockId& block = blocks[static_cast<std::size_t>(i)];
      block = pool_.Name(block);
      pool_.Cache(block, {request.BlockHashAt(i), static_cast<int>(g)});
    }
  }
}

KvCacheManager::Family* KvCacheManager::FamilyHeldBy(const Request& request) {
  if (!defer_families_ || request.family == 0) return nullptr;
  Family* family = families_.Find(request.family);
  return family != nullptr && family->holder == &request ? family : nullptr;
}

KvCacheManager::RecordRef& KvCacheManager::RecordOf(uint64_t serial) {
  const auto it = std::lower_bound(records_.begin() + static_cast<std::ptrdiff_t>(records_head_),
                                   records_.end(), serial,
                                   [](const RecordRef& ref, uint64_t s) { return ref.serial < s; });
  FLEETSIM_CHECK(it != records_.end() && it->serial == serial, "a conversation's record is listed");
  return *it;
}

bool KvCacheManager::CatchUpRecord(Family& family, const Request& looker) {
  RecordRef& ref = RecordOf(family.serial);
  // The block at position first + k has number top - k: queued while that is not below
  // the numbers popped, so the positions still queued are the record's first `live`.
  const int64_t live = std::max<int64_t>(
      0, std::min<int64_t>(family.end - family.first, ref.top - pool_.anonymous_popped() + 1));
  // Of those, the looker names the first `known` with its own hashes.
  const auto& hashes = looker.prompt_block_hashes;
  const int64_t known =
      std::clamp<int64_t>(static_cast<int64_t>(hashes.size()) - family.first, 0, live);
  if (known > 0) {
    std::vector<CacheKey> keys(static_cast<std::size_t>(known));
    for (int64_t k = 0; k < known; ++k) {  // in number order: the last position first
      const auto position = static_cast<std::size_t>(family.first + known - 1 - k);
      keys[static_cast<std::size_t>(k)] = {hashes[position], 0};
    }
    pool_.CacheQueuedAnonymous(ref.top - (known - 1), keys);
    // The records made later hold the later numbers.
    for (auto later = records_.begin() + (&ref - records_.data()) + 1; later != records_.end();
         ++later) {
      if (later->top >= 0) later->top -= known;
    }
  }
  if (known < live) {  // the rest keep their numbers, below those just cached
    family.first = static_cast<int32_t>(family.first + known);
    ref.top -= known;
  } else {
    ref.top = -1;
    family.serial = 0;
  }
  return known > 0;
}

void KvCacheManager::ForgetPoppedRecords() {
  const int64_t popped = pool_.anonymous_popped();
  for (; records_head_ < records_.size(); ++records_head_) {
    const RecordRef& ref = records_[records_head_];
    if (ref.top >= popped) break;  // the oldest record still queued
    if (ref.top < 0) continue;     // made good already
    const Family* family = families_.Find(ref.family);
    FLEETSIM_CHECK(family != nullptr && family->serial == ref.serial,
                   "a listed record is its conversation's");
    families_.Erase(ref.family);
  }
  if (records_head_ >= 64 && 2 * records_head_ > records_.size()) {
    records_.erase(records_.begin(), records_.begin() + static_cast<std::ptrdiff_t>(records_head_));
    records_head_ = 0;
  }
}

void KvCacheManager::ForgetEndedRecords(SimTime arrived_before,
                                        const std::vector<uint64_t>& live_families) {
  std::size_t kept = 0;
  for (std::size_t i = records_head_; i < records_.size(); ++i) {
    RecordRef ref = records_[i];
    if (ref.top < 0) continue;  // made good or forgotten already
    if (ref.ends < arrived_before &&
        !std::binary_search(live_families.begin(), live_families.end(), ref.family)) {
      const Family* family = families_.Find(ref.family);
      FLEETSIM_CHECK(family != nullptr && family->serial == ref.serial && family->holder == nullptr,
                     "a listed record is its conversation's");
      families_.Erase(ref.family);
      continue;
    }
    records_[kept++] = ref;  // in order: serials and numbers stay sorted
  }
  records_.resize(kept);
  records_head_ = 0;
  // Room follows what is kept (an instance the load has left keeps next to nothing).
  if (records_.capacity() > 64 && records_.capacity() > 4 * records_.size())
    records_.shrink_to_fit();
  families_.ShrinkIfSparse();
}

bool KvCacheManager::IsAttention(std::size_t group) const {
  return layout_.groups[group].type == LayerType::kFullAttention;
}

PrefixHit KvCacheManager::FindLongestHit(const Request& request) const {
  PrefixHit hit;
  FindLongestHit(request, hit);
  return hit;
}

void KvCacheManager::FindLongestHit(const Request& request, PrefixHit& hit) const {
  const std::size_t num_groups = layout_.groups.size();
  hit.tokens = 0;
  hit.blocks.resize(num_groups);
  for (auto& blocks : hit.blocks)
    blocks.clear();
  if (!prefix_caching_) return;
  // Past these every lookup would miss: nothing else has those hashes yet. (The prompt's
  // own hashes past the shared ones are looked up: an earlier request may have cached
  // them, such as a conversation's earlier turn.)
  const int64_t indexable = request.private_blocks_indexed
                                ? INT64_MAX
                                : static_cast<int64_t>(request.prompt_block_hashes.size());
  const int64_t max_blocks = std::min((request.num_tokens() - 1) / block_size_, indexable);

  // Attention: the longest run of cached blocks from the start, in every attention group,
  // collected as it is found.
  int64_t attention_blocks = 0;
  for (; attention_blocks < max_blocks; ++attention_blocks) {
    PrefetchKeys(request, 0, attention_blocks, max_blocks);
    const BlockHash hash = request.BlockHashAt(attention_blocks);
    bool all = true;
    for (std::size_t g = 0; g < num_groups && all; ++g) {
      if (!IsAttention(g)) continue;
      const std::optional<BlockId> block = pool_.Lookup({hash, static_cast<int>(g)});
      if (block) {
        hit.blocks[g].push_back(*block);
      } else {
        all = false;
      }
    }
    if (!all) break;
  }
  // GDN: the last block index within that run where every GDN group has a checkpoint.
  int64_t hit_blocks = attention_blocks;
  if (layout_.GdnGroups() > 0) {
    while (hit_blocks > 0) {
      const BlockHash hash = request.BlockHashAt(hit_blocks - 1);
      bool all = true;
      for (std::size_t g = 0; g < num_groups && all; ++g) {
        if (IsAttention(g)) continue;
        const std::optional<BlockId> block = pool_.Lookup({hash, static_cast<int>(g)});
        if (block) {
          hit.blocks[g].assign(1, *block);
        } else {
          all = false;
        }
      }
      if (all) break;
      --hit_blocks;
    }
  }
  hit.tokens = hit_blocks * block_size_;
  for (std::size_t g = 0; g < num_groups; ++g) {
    if (hit_blocks == 0) {
      hit.blocks[g].clear();
    } else if (IsAttention(g)) {
      hit.blocks[g].resize(static_cast<std::size_t>(hit_blocks));
    }
  }
}

int64_t KvCacheManager::BlocksNeeded(const Request& request, std::size_t group,
                                     int64_t total_tokens, int64_t check_tokens,
                                     const std::vector<BlockId>& hit, int64_t hit_positions,
                                     int64_t slot_tokens) const {
  const auto& held = request.blocks[group];
  // A hit block waiting in the free queue leaves it when reused: it costs a free block.
  int64_t evictable = 0;
  for (BlockId block : hit)
    evictable += pool_.IsFree(block) ? 1 : 0;
  if (IsAttention(group)) {
    const int64_t required = CeilDiv(std::max(slot_tokens, check_tokens));
    return std::max<int64_t>(0, required - static_cast<int64_t>(hit.size() + held.size())) +
           evictable;
  }
  if (!align_) return (held.empty() ? 1 + layout_.num_spec : 0) + evictable;
  // Align: a new block when the state after this step lands on a position not yet held.
  const int64_t held_positions = hit.empty() ? static_cast<int64_t>(held.size()) : hit_positions;
  const int64_t new_position = CeilDiv(total_tokens) - 1;
  return (new_position >= held_positions ? 1 + layout_.num_spec : 0) + evictable;
}

void KvCacheManager::FreeSkippedStates(Request& request) {
  if (!align_ || request.num_computed == 0) return;
  const int64_t state_position = CeilDiv(request.num_computed) - 1;
  if (state_position <= request.gdn_scan_from) return;  // nothing new before the state
  for (std::size_t g = 0; g < layout_.groups.size(); ++g) {
    if (IsAttention(g)) continue;
    auto& blocks = request.blocks[g];
    // Every real block before the current state goes, last first; chunks that span
    // several blocks leave null positions between them, so do not stop at a null.
    for (int64_t i = std::min<int64_t>(state_position, static_cast<int64_t>(blocks.size())) - 1;
         i >= request.gdn_scan_from; --i) {
      BlockId& block = blocks[static_cast<std::size_t>(i)];
      if (block == kNullBlock) continue;
      pool_.Free(block);
      block = kNullBlock;
    }
  }
  request.gdn_scan_from = state_position;
}

bool KvCacheManager::Allocate(Request& request, int64_t num_new_tokens, const PrefixHit& hit,
                              bool full_sequence_must_fit, int64_t lookahead_tokens) {
  if (AllocateDecodeWithoutPoolWork(request, num_new_tokens, hit, full_sequence_must_fit,
                                    lookahead_tokens)) {
    return true;
  }
  const std::size_t num_groups = layout_.groups.size();
  if (request.blocks.empty()) {
    request.blocks.resize(num_groups);
    request.num_shared_hashes = static_cast<int32_t>(request.shared_hash_blocks());
    // Its conversation's blocks wait anonymously until another turn comes (the header).
    if (DefersFamily(request) && request.family_hash_start < request.num_shared_hashes)
      request.num_shared_hashes = static_cast<int32_t>(request.family_hash_start);
    // Room for the request at its longest, once, rather than growing step by step.
    const int64_t longest = std::min(request.prompt_tokens + request.max_output_tokens,
                                     std::max<int64_t>(layout_.max_model_len, 1));
    for (std::size_t g = 0; g < num_groups; ++g) {
      const bool positions = IsAttention(g) || align_;
      request.blocks[g].reserve(
          static_cast<std::size_t>(positions ? CeilDiv(longest) : 1 + layout_.num_spec));
    }
  }
  FreeSkippedStates(request);
  // A turn that gets its first blocks lazily holds its conversation's (the header).
  const bool first_blocks = DefersFamily(request) && request.blocks[0].empty() &&
                            request.num_shared_hashes < request.shared_hash_blocks();

  const int64_t computed = std::max(request.num_computed, hit.tokens);
  const int64_t total = computed + num_new_tokens;
  const int64_t check = full_sequence_must_fit ? request.num_tokens() : 0;
  const int64_t slots =
      lookahead_tokens > 0
          ? std::max(total, std::min(total + lookahead_tokens, layout_.max_model_len))
          : total;
  static const std::vector<BlockId> kNoHit;
  int64_t needed = 0;
  for (std::size_t g = 0; g < num_groups; ++g) {
    const auto& hit_blocks = hit.blocks.empty() ? kNoHit : hit.blocks[g];
    needed += BlocksNeeded(request, g, total, check, hit_blocks, hit.tokens / block_size_, slots);
  }
  if (needed > pool_.num_free()) return false;

  // Reuse the hit first, so that allocating new blocks cannot evict it.
  for (std::size_t g = 0; g < num_groups && hit.tokens > 0; ++g) {
    auto& blocks = request.blocks[g];
    if (IsAttention(g)) {
      for (BlockId block : hit.blocks[g]) {
        pool_.Touch(block);
        blocks.push_back(block);
      }
    } else {
      blocks.assign(static_cast<std::size_t>(hit.tokens / block_size_ - 1), kNullBlock);
      pool_.Touch(hit.blocks[g].front());
      blocks.push_back(hit.blocks[g].front());
    }
  }
  for (std::size_t g = 0; g < num_groups; ++g) {
    auto& blocks = request.blocks[g];
    int64_t fresh = 0;
    if (IsAttention(g)) {
      // Blocks whose hash can never be in the index are held anonymously (no pool state).
      const auto held = static_cast<int64_t>(blocks.size());
      const int64_t end = std::max(CeilDiv(slots), held);
      const int64_t named =
          prefix_caching_ ? std::clamp(IndexableBlocks(request) - held, int64_t{0}, end - held) : 0;
      if (named > 0) pool_.Allocate(named, blocks);
      if (end - held - named > 0) pool_.Allocate(end - held - named, blocks, true);
      continue;
    }
    if (!align_) {
      fresh = blocks.empty() ? 1 + layout_.num_spec : 0;
    } else {
      const int64_t new_position = CeilDiv(total) - 1;
      if (new_position >= static_cast<int64_t>(blocks.size())) {
        blocks.resize(static_cast<std::size_t>(new_position), kNullBlock);
        fresh = 1 + layout_.num_spec;
      }
    }
    // GDN states are cached (checkpoints) only with prefix caching.
    if (fresh > 0) pool_.Allocate(fresh, blocks, !prefix_caching_);
  }
  // Hash the attention blocks this step fills, as vLLM does at allocation: those a hit
  // reused are cached already, and private ones wait for a preemption (see the header).
  if (prefix_caching_) {
    const int64_t full = std::min(total, request.num_tokens()) / block_size_;
    const int64_t from = std::max(request.num_hashed_blocks, hit.tokens / block_size_);
    const int64_t to = std::min(full, IndexableBlocks(request));
    for (int64_t i = from; i < to; ++i) {
      PrefetchKeys(request, from, i, to);
      const BlockHash hash = request.BlockHashAt(i);
      for (std::size_t g = 0; g < num_groups; ++g) {
        if (IsAttention(g))
          pool_.Cache(request.blocks[g][static_cast<std::size_t>(i)], {hash, static_cast<int>(g)});
      }
    }
    request.num_hashed_blocks = std::max(request.num_hashed_blocks, full);
  }
  if (first_blocks) {
    Family& family = families_.Insert(request.family);
    FLEETSIM_CHECK(family.holder == nullptr && family.serial == 0,
                   "a turn is looked up (PrepareLookup) before it holds blocks");
    family.holder = &request;
  }
  return true;
}

void KvCacheManager::CommitStep(Request& request) {
  if (!prefix_caching_ || !align_ || request.num_computed % block_size_ != 0) return;
  const int64_t position = request.num_computed / block_size_ - 1;
  if (position < 0) return;
  const BlockHash hash = request.BlockHashAt(position);
  for (std::size_t g = 0; g < layout_.groups.size(); ++g) {
    if (IsAttention(g)) continue;
    const auto& blocks = request.blocks[g];
    if (position < static_cast<int64_t>(blocks.size())) {
      pool_.Cache(blocks[static_cast<std::size_t>(position)], {hash, static_cast<int>(g)});
    }
  }
}

int64_t KvCacheManager::DecodeStepsWithoutPoolWork(const Request& request) const {
  const int64_t computed = request.num_computed;
  const int64_t b = block_size_;
  const int64_t phase = computed % b;
  // Steps until the computed count is `target` (in [0, b)) modulo the block size.
  const auto steps_to = [b, phase](int64_t target) {
    const int64_t d = target - phase;
    return d < 0 ? d + b : d;
  };
  int64_t steps = INT64_MAX;
  // The step from a multiple of the block opens a new block (attention, and GDN in align).
  if (has_attention_ || align_) steps = steps_to(0);
  // The step after a checkpoint releases the older GDN state -- or the next one, when a
  // prefill chunk moved the state since the last release.
  if (align_) {
    const bool behind = computed > 0 && CeilDiv(computed) - 1 > request.gdn_scan_from;
    steps = std::min(steps, behind ? 0 : steps_to(1 % b));
  }
  // The step that fills a block hashes it (when it can be in the index) and, in align
  // mode, caches the GDN checkpoint.
  if (prefix_caching_) {
    const int64_t to_full = steps_to(b - 1);
    const int64_t filled = computed / b;  // the block that step fills
    if (align_ || filled < IndexableBlocks(request)) steps = std::min(steps, to_full);
  }
  return steps;
}

bool KvCacheManager::AllocateDecodeWithoutPoolWork(Request& request, int64_t num_new_tokens,
                                                   const PrefixHit& hit,
                                                   bool full_sequence_must_fit,
                                                   int64_t lookahead_tokens) const {
  const bool decode = num_new_tokens == 1 && hit.tokens == 0 && !full_sequence_must_fit &&
                      lookahead_tokens == 0 && request.num_computed >= request.prompt_tokens &&
                      request.num_computed == request.num_tokens() - 1;
  if (!decode || request.blocks.empty() || DecodeStepsWithoutPoolWork(request) == 0) return false;
  if (prefix_caching_) {
    const int64_t full = std::min(request.num_computed + 1, request.num_tokens()) / block_size_;
    request.num_hashed_blocks = std::max(request.num_hashed_blocks, full);
  }
  return true;
}

int64_t KvCacheManager::BlocksToContinue(const Request& request, int64_t num_new_tokens) const {
  static const std::vector<BlockId> kNoHit;
  const int64_t total = request.num_computed + num_new_tokens;
  int64_t needed = 0;
  for (std::size_t g = 0; g < layout_.groups.size(); ++g)
    needed += BlocksNeeded(request, g, total, 0, kNoHit, 0, total);
  return needed;
}

int64_t KvCacheManager::AnonymousDecodeBlocks(const Request& request) const {
  if (align_) return 0;
  // The next boundary's block is number num_computed / block; later ones come after it.
  if (prefix_caching_ && request.num_computed / block_size_ < IndexableBlocks(request)) return 0;
  return layout_.AttentionGroups();
}

void KvCacheManager::ListAnonymousDecodeBlocks(Request& request, int64_t boundaries) const {
  for (std::size_t g = 0; g < layout_.groups.size(); ++g) {
    if (!IsAttention(g)) continue;
    auto& blocks = request.blocks[g];
    blocks.insert(blocks.end(), static_cast<std::size_t>(boundaries), kAnonymousBlock);
  }
}

void KvCacheManager::CatchUpHashedBlocks(Request& request) const {
  if (!prefix_caching_) return;
  request.num_hashed_blocks =
      std::max(request.num_hashed_blocks,
               std::min(request.num_computed, request.num_tokens()) / block_size_);
}

void KvCacheManager::Preempt(Request& request) {
  if (prefix_caching_ && !request.private_blocks_indexed) {
    if (FamilyHeldBy(request) != nullptr) families_.Erase(request.family);  // indexed now
    IndexHeldBlocks(request, INT64_MAX);
    request.private_blocks_indexed = true;
  }
  Free(request);
}

void KvCacheManager::Free(Request& request) {
  // A turn holding its conversation's blocks lazily leaves a record of those it hashed:
  // positions [first, end), held anonymously past the hits it took (see the header).
  Family* family = FamilyHeldBy(request);
  int64_t first = 0;
  int64_t end = 0;
  int64_t top = -1;
  if (family != nullptr) {
    family->holder = nullptr;
    const auto& blocks = request.blocks[0];
    const auto held = static_cast<int64_t>(blocks.size());
    end = std::min({request.num_hashed_blocks, held, request.shared_hash_blocks()});
    first = request.num_shared_hashes;
    while (first < end && blocks[static_cast<std::size_t>(first)] != kAnonymousBlock)
      ++first;
    if (first < end) {
      // Every block from `first` on is anonymous (hits come first), so they go back one
      // number each, the last first: `first`'s is the last of them.
      FLEETSIM_CHECK(std::all_of(blocks.begin() + first, blocks.end(),
                                 [](BlockId b) { return b == kAnonymousBlock; }),
                     "a conversation's lazily held blocks are anonymous");
      top = pool_.anonymous_pushed() + (held - 1 - first);
    }
  }
  for (std::size_t g = 0; g < request.blocks.size(); ++g) {
    auto& blocks = request.blocks[g];
    // Anonymous blocks in a row go back as one count: the same queue.
    int64_t anonymous = 0;
    constexpr auto kAhead = static_cast<std::ptrdiff_t>(BlockPool::kPrefetchAhead);
    for (auto it = blocks.rbegin(); it != blocks.rend(); ++it) {
      if (blocks.rend() - it > kAhead) pool_.PrefetchState(it[kAhead]);
      if (*it == kAnonymousBlock) {
        ++anonymous;
        continue;
      }
      pool_.FreeAnonymous(anonymous);
      anonymous = 0;
      pool_.Free(*it);
    }
    pool_.FreeAnonymous(anonymous);
    blocks.clear();
  }
  request.blocks.clear();
  request.num_hashed_blocks = 0;
  request.gdn_scan_from = 0;
  if (family == nullptr) return;
  if (top < 0) {
    families_.Erase(request.family);
    return;
  }
  family->first = static_cast<int32_t>(first);
  family->end = static_cast<int32_t>(end);
  family->serial = next_serial_++;
  records_.push_back({request.family, family->serial, top, request.family_ends});
  ForgetPoppedRecords();
}

}  // namespace fleetsim
