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

int64_t Scheduler::AlignedSplit(const Request& request, int64_t computed, int64_t n) const {
  if (!align_) return n;
  return AlignedChunk(request.prompt_tokens, request.num_tokens(), computed, n, block_size_);
}

void Scheduler::Preempt(Request* victim) {
  kv_cache_.Preempt(*victim);
  victim->num_computed = 0;
  victim->state = RequestState::kWaiting;
  ++victim->num_preemptions;
  waiting_.push_front(victim);
}

const StepPlan& Scheduler::Schedule() {
  StepPlan& plan = plan_;
  plan.chunks.clear();
  plan.preempted.clear();
  plan.total_tokens = 0;
  int64_t budget = config_.max_num_batched_tokens;
  const PrefixHit& no_hit = no_hit_;

  for (std::size_t i = 0; i < running_.size() && budget > 0;) {
    Request* request = running_[i];
    int64_t n = request->num_tokens() - request->num_computed;
    if (config_.long_prefill_token_threshold > 0 && n > config_.long_prefill_token_threshold) {
      n = config_.long_prefill_token_threshold;
    }
    n = std::min({n, budget, config_.max_model_len - 1 - request->num_computed});
    n = AlignedSplit(*request, request->num_computed, n);
    if (n <= 0) {
      ++i;  // nothing this step (a floored chunk); the others proceed
      continue;
    }
    bool scheduled = true;
    while (!kv_cache_.Allocate(*request, n, no_hit, false)) {
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
    plan.chunks.push_back({request, n, request->num_computed, false, 0, request->num_output});
    budget -= n;
    ++i;
  }

  if (plan.preempted.empty()) {
    while (!waiting_.empty() && budget > 0 &&
           static_cast<int>(running_.size()) < config_.max_num_seqs) {
      Request* request = waiting_.front();
      PrefixHit& hit = hit_;
      kv_cache_.FindLongestHit(*request, hit);
      int64_t n = request->num_tokens() - hit.tokens;
      if (config_.long_prefill_token_threshold > 0 && n > config_.long_prefill_token_threshold) {
        n = config_.long_prefill_token_threshold;
      }
      if (!config_.chunked_prefill && n > budget) break;
      n = std::min(n, budget);
      n = AlignedSplit(*request, hit.tokens, n);
      if (n <= 0) break;  // a floored chunk ends admission for this step
      if (!kv_cache_.Allocate(*request, n, hit, true)) break;
      waiting_.pop_front();
      running_.push_back(request);
      request->state = RequestState::kRunning;
      request->num_computed = hit.tokens;
      if (request->num_preemptions == 0) request->cached_tokens = hit.tokens;
      plan.chunks.push_back({request, n, hit.tokens, true, hit.tokens, request->num_output});
      budget -= n;
    }
  }
  for (const ScheduledChunk& chunk : plan.chunks)
    plan.total_tokens += chunk.num_tokens;
  return plan;
}

const std::vector<Request*>& Scheduler::Complete(const StepPlan& plan) {
  std::vector<Request*>& finished = finished_;
  finished.clear();
  for (const ScheduledChunk& chunk : plan.chunks) {
    Request* request = chunk.request;
    request->num_computed += chunk.num_tokens;
    kv_cache_.CommitStep(*request);
    if (!request->prefill_done()) continue;
    ++request->num_output;
    if (request->num_output >= request->max_output_tokens ||
        request->num_tokens() >= config_.max_model_len) {
      request->state = RequestState::kFinished;
      kv_cache_.Free(*request);
      finished.push_back(request);
    }
  }
  if (!finished.empty()) {
    std::erase_if(running_, [](const Request* r) { return r->state == RequestState::kFinished; });
  }
  return finished;
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
