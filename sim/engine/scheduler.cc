#include "engine/scheduler.h"

#include <algorithm>

namespace fleetsim {

Scheduler::Scheduler(const SchedulerConfig& config, KvCacheManager& kv_cache)
    : config_(config),
      kv_cache_(kv_cache),
      align_(kv_cache.layout().mamba_mode == MambaCacheMode::kAlign),
      block_size_(kv_cache.layout().block_size) {}

int64_t AlignedChunk(int64_t prompt_tokens, int64_t num_tokens, int64_t computed, int64_t n,
                     int64_t block_size) {
  if (computed >= std::max(prompt_tokens, num_tokens - 1)) return n;  // decoding
  const int64_t last_boundary = num_tokens - num_tokens % block_size;
  if (computed + n < last_boundary) return n / block_size * block_size;
  if (computed < last_boundary && last_boundary < computed + n) return last_boundary - computed;
  return n;  // the final tail, shorter than a block
}

std::string_view NameOf(RejectReason reason) {
  switch (reason) {
    case RejectReason::kNone:
      return "none";
    case RejectReason::kPromptTooLong:
      return "prompt_too_long";
    case RejectReason::kExceedsKvCache:
      return "exceeds_kv_cache";
  }
  return "?";
}

RejectReason Scheduler::Add(Request* request) {
  RejectReason reason = RejectReason::kNone;
  const KvCacheLayout& layout = kv_cache_.layout();
  const int64_t longest =
      std::min(request->prompt_tokens + request->max_output_tokens, config_.max_model_len);
  if (request->prompt_tokens >= config_.max_model_len) {
    reason = RejectReason::kPromptTooLong;
  } else if (layout.BlocksPerRequest(longest, layout.mamba_mode) > kv_cache_.num_usable_blocks()) {
    reason = RejectReason::kExceedsKvCache;
  }
  if (reason != RejectReason::kNone) {
    request->state = RequestState::kRejected;
    return reason;
  }
  request->state = RequestState::kWaiting;
  waiting_.push_back(request);
  return reason;
}

int64_t ComputedAtAdmission(const Request& request, int64_t hit_tokens) {
  // vLLM scheduler.py _update_waiting_for_remote_kv: the loaded blocks count as computed,
  // less one token when they cover the whole request, so that the decode instance runs
  // the last prompt token and samples the first output token itself.
  if (!request.remote_prefilled || request.num_preemptions > 0) return hit_tokens;
  return std::max(hit_tokens, request.num_tokens() - 1);
}

int64_t Scheduler::AlignedSplit(const Request& request, int64_t computed, int64_t n) const {
  if (!align_) return n;
  return AlignedChunk(request.prompt_tokens, request.num_tokens(), computed, n, block_size_);
}

int64_t Scheduler::DraftsOf(const Request& request) const {
  const bool decoding =
      request.emitted_last_step && request.num_computed == request.num_tokens() - 1;
  return decoding ? config_.speculative.num_tokens : 0;
}

int64_t Scheduler::SettleDrafts(const ScheduledChunk& chunk) {
  Request& request = *chunk.request;
  const int64_t accepted =
      AcceptedDrafts(config_.speculative, request.id, chunk.output_before, chunk.drafts);
  request.num_computed -= chunk.drafts - accepted;
  step_drafts_ += chunk.drafts;
  step_accepted_ += accepted;
  return accepted + 1;
}

void Scheduler::Preempt(Request* victim) {
  kv_cache_.Preempt(*victim);
  victim->num_computed = 0;
  victim->emitted_last_step = false;
  victim->state = RequestState::kWaiting;
  ++victim->num_preemptions;
  waiting_.push_front(victim);
}

int64_t Scheduler::RunningChunk(const Request& request, int64_t budget) const {
  int64_t n = request.num_tokens() + DraftsOf(request) - request.num_computed;
  if (config_.long_prefill_token_threshold > 0 && n > config_.long_prefill_token_threshold) {
    n = config_.long_prefill_token_threshold;
  }
  n = std::min({n, budget, config_.max_model_len - 1 - request.num_computed});
  return AlignedSplit(request, request.num_computed, n);
}

const StepPlan& Scheduler::Schedule() {
  return ScheduleFrom(0);
}

const StepPlan& Scheduler::ScheduleFrom(std::size_t first) {
  StepPlan& plan = plan_;
  plan.chunks.clear();
  plan.preempted.clear();
  plan.total_tokens = 0;
  // The first `first` running requests decode in the caller's hands: a token each.
  int64_t budget = config_.max_num_batched_tokens - static_cast<int64_t>(first);
  const PrefixHit& no_hit = no_hit_;

  const int64_t lookahead = config_.speculative.num_tokens;
  for (std::size_t i = first; i < running_.size() && budget > 0;) {
    Request* request = running_[i];
    const int64_t n = RunningChunk(*request, budget);
    if (n <= 0) {
      ++i;  // nothing this step (a floored chunk); the others proceed
      continue;
    }
    bool scheduled = true;
    while (!kv_cache_.Allocate(*request, n, no_hit, false, lookahead)) {
      Request* victim = running_.back();
      running_.pop_back();
      Preempt(victim);
      plan.preempted.push_back(victim);
      if (victim == request) {
        scheduled = false;
        break;
      }
    }
    if (!scheduled) break;
    // Drafts cut by the budget or max_model_len are not verified (vLLM trims spec_token_ids).
    const int64_t drafts =
        std::max<int64_t>(0, n - (request->num_tokens() - request->num_computed));
    plan.chunks.push_back(
        {request, n, request->num_computed, false, 0, request->num_output, drafts});
    budget -= n;
    ++i;
  }

  if (plan.preempted.empty()) {
    while (!waiting_.empty() && budget > 0 && std::ssize(running_) + held_ < config_.max_num_seqs) {
      if (!AdmitFront(budget)) break;
    }
  }
  for (const ScheduledChunk& chunk : plan.chunks)
    plan.total_tokens += chunk.num_tokens;
  return plan;
}

bool Scheduler::AdmitFront(int64_t& budget) {
  Request* request = waiting_.front();
  PrefixHit& hit = hit_;
  kv_cache_.PrepareLookup(*request);
  kv_cache_.FindLongestHit(*request, hit);
  const int64_t computed = ComputedAtAdmission(*request, hit.tokens);
  int64_t n = request->num_tokens() - computed;
  if (config_.long_prefill_token_threshold > 0 && n > config_.long_prefill_token_threshold) {
    n = config_.long_prefill_token_threshold;
  }
  if (!config_.chunked_prefill && n > budget) return false;
  n = std::min(n, budget);
  n = AlignedSplit(*request, computed, n);
  if (n <= 0) return false;  // a floored chunk ends admission for this step
  // Blocks for everything computed elsewhere too (remote KV lands in them).
  if (!kv_cache_.Allocate(*request, computed - hit.tokens + n, hit, true)) return false;
  waiting_.pop_front();
  running_.push_back(request);
  request->state = RequestState::kRunning;
  request->num_computed = computed;
  if (request->num_preemptions == 0) request->cached_tokens = hit.tokens;
  // No lookahead at admission (vLLM: none while num_computed_tokens is 0), no drafts.
  plan_.chunks.push_back({request, n, computed, true, hit.tokens, request->num_output, 0});
  budget -= n;
  return true;
}

int64_t Scheduler::TailBlocks(int64_t decodes) const {
  // Schedule's running loop past the decodes, counting instead of allocating.
  int64_t budget = config_.max_num_batched_tokens - decodes;
  int64_t blocks = 0;
  for (auto i = static_cast<std::size_t>(decodes); i < running_.size() && budget > 0; ++i) {
    const int64_t n = RunningChunk(*running_[i], budget);
    if (n <= 0) continue;
    blocks += kv_cache_.BlocksToContinue(*running_[i], n);
    budget -= n;
  }
  return blocks;
}

bool Scheduler::RunCanAdmit() const {
  const std::size_t room = static_cast<std::size_t>(
      std::max<int64_t>(0, config_.max_num_seqs - std::ssize(running_) - held_));
  for (std::size_t i = 0; i < waiting_.size() && i < room; ++i) {
    if (waiting_[i]->remote_prefilled || waiting_[i]->remote_decode) return false;
  }
  return true;
}

const StepPlan& Scheduler::PlanRunStep(int64_t decodes) {
  const StepPlan& plan = ScheduleFrom(static_cast<std::size_t>(decodes));
  FLEETSIM_CHECK(plan.preempted.empty(), "a decode run's tail chunks were counted free");
  return plan;
}

const std::vector<Request*>& Scheduler::Complete(const StepPlan& plan) {
  std::vector<Request*>& finished = finished_;
  finished.clear();
  step_drafts_ = 0;
  step_accepted_ = 0;
  step_freed_blocks_ = 0;
  for (const ScheduledChunk& chunk : plan.chunks) {
    if (Advance(chunk)) finished.push_back(chunk.request);
  }
  if (!finished.empty()) DropFinished();
  return finished;
}

bool Scheduler::Advance(const ScheduledChunk& chunk) {
  Request* request = chunk.request;
  request->num_computed += chunk.num_tokens;
  const int64_t emitted = chunk.drafts > 0 ? SettleDrafts(chunk) : 1;
  kv_cache_.CommitStep(*request);
  request->emitted_last_step = request->prefill_done();
  if (!request->prefill_done()) return false;
  // Tokens past the output limit or max_model_len are dropped (vLLM's check_stop per token).
  const int64_t room = std::min(request->max_output_tokens - request->num_output,
                                config_.max_model_len - request->num_tokens());
  request->num_output += std::clamp<int64_t>(room, 1, emitted);
  if (request->num_output < request->max_output_tokens &&
      request->num_tokens() < config_.max_model_len) {
    return false;
  }
  request->state = RequestState::kFinished;
  // A prefill instance's request keeps its blocks until its KV is sent: the instance
  // frees them (Instance::ReleaseSentUpTo), as vLLM's delay_free_blocks does.
  if (!request->remote_decode) {
    const int64_t free_before = kv_cache_.num_free_blocks();
    kv_cache_.Free(*request);
    step_freed_blocks_ += kv_cache_.num_free_blocks() - free_before;
  }
  return true;
}

void Scheduler::DropFinished() {
  std::erase_if(running_, [](const Request* r) { return r->state == RequestState::kFinished; });
}

void Scheduler::Save(CheckpointWriter& w,
                     const std::function<int64_t(const Request*)>& index_of) const {
  w.U64(running_.size());
  for (const Request* r : running_)
    w.I64(index_of(r));
  w.U64(waiting_.size());
  for (const Request* r : waiting_)
    w.I64(index_of(r));
}

void Scheduler::Load(CheckpointReader& r, const std::vector<Request*>& requests) {
  auto take = [&] {
    const int64_t index = r.I64();
    r.Require(index >= 0 && index < static_cast<int64_t>(requests.size()), "scheduled request");
    return requests[static_cast<std::size_t>(index)];
  };
  running_.assign(r.Count(8), nullptr);
  for (Request*& request : running_)
    request = take();
  waiting_.assign(r.Count(8), nullptr);
  for (Request*& request : waiting_)
    request = take();
}

}  // namespace fleetsim
