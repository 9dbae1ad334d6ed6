// A scheduler over a real model layout and a pool of a chosen size, driven step by step.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/kv_cache_manager.h"
#include "engine/scheduler.h"
#include "engine/test_models.h"

namespace fleetsim::testing {

class EngineHarness {
 public:
  EngineHarness(const std::string& model, EngineConfig config, int64_t num_blocks)
      : engine_(Resolve(Card(model), config)),
        layout_(ResolveKvCacheLayout(Card(model), engine_, SettingErrorFor)),
        kv_(layout_, num_blocks, engine_.prefix_caching),
        scheduler_(SchedulerConfigOf(engine_), kv_) {}

  // A request with prompt block hashes (one per full block at the engine's block size).
  Request* Make(const std::string& name, int64_t prompt, int64_t outputs,
                std::vector<BlockHash> hashes = {}) {
    auto request = std::make_unique<Request>();
    request->id = static_cast<int64_t>(requests_.size());
    request->name = name;
    request->prompt_tokens = prompt;
    request->max_output_tokens = outputs;
    request->prompt_block_hashes = std::move(hashes);
    requests_.push_back(std::move(request));
    return requests_.back().get();
  }
  Request* Add(const std::string& name, int64_t prompt, int64_t outputs,
               std::vector<BlockHash> hashes = {}) {
    Request* request = Make(name, prompt, outputs, std::move(hashes));
    scheduler_.Add(request);
    return request;
  }

  // One step: schedule, record, complete.
  StepPlan Step() {
    StepPlan plan = scheduler_.Schedule();
    for (Request* r : scheduler_.Complete(plan))
      finished_.push_back(r);
    return plan;
  }
  // "name:tokens@computed" per scheduled request.
  static std::vector<std::string> Chunks(const StepPlan& plan) {
    std::vector<std::string> out;
    for (const ScheduledChunk& c : plan.chunks) {
      out.push_back(c.request->name + ":" + std::to_string(c.num_tokens) + "@" +
                    std::to_string(c.computed_before));
    }
    return out;
  }
  // Steps until nothing is left; the chunks each step scheduled.
  std::vector<std::vector<std::string>> RunToIdle(int max_steps = 100000) {
    std::vector<std::vector<std::string>> steps;
    while (!scheduler_.idle() && max_steps-- > 0)
      steps.push_back(Chunks(Step()));
    return steps;
  }

  Scheduler& scheduler() { return scheduler_; }
  KvCacheManager& kv() { return kv_; }
  const KvCacheLayout& layout() const { return layout_; }
  const std::vector<Request*>& finished() const { return finished_; }
  const std::vector<std::unique_ptr<Request>>& requests() const { return requests_; }

 private:
  static SchedulerConfig SchedulerConfigOf(const ResolvedEngineConfig& e) {
    SchedulerConfig config;
    config.max_num_batched_tokens = e.max_num_batched_tokens;
    config.max_num_seqs = e.max_num_seqs;
    config.max_model_len = e.max_model_len;
    config.long_prefill_token_threshold = e.long_prefill_token_threshold;
    config.chunked_prefill = e.chunked_prefill;
    config.speculative = e.speculative;
    return config;
  }

  ResolvedEngineConfig engine_;
  KvCacheLayout layout_;
  KvCacheManager kv_;
  Scheduler scheduler_;
  std::vector<std::unique_ptr<Request>> requests_;
  std::vector<Request*> finished_;
};

inline EngineConfig HybridAlign(int budget) {
  EngineConfig config;
  config.enable_prefix_caching = true;
  config.max_num_batched_tokens = budget;
  config.max_model_len = 32768;
  return config;
}

// The 27B hybrid with MTP speculation: prefix caching off (mamba mode "none"), k drafts
// accepted at the given per-position rates.
inline EngineConfig HybridSpeculative(int budget, std::vector<double> acceptance) {
  EngineConfig config;
  config.enable_prefix_caching = false;
  config.max_num_batched_tokens = budget;
  config.max_model_len = 32768;
  config.num_speculative_tokens = static_cast<int>(acceptance.size());
  config.speculative_acceptance = std::move(acceptance);
  return config;
}

inline EngineConfig Dense(bool prefix_caching, int budget = 2048) {
  EngineConfig config;
  config.enable_prefix_caching = prefix_caching;
  config.max_num_batched_tokens = budget;
  config.max_model_len = 8192;
  return config;
}

}  // namespace fleetsim::testing
