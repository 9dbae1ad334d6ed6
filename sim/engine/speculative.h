// MTP speculative decoding as vLLM v1 runs it (`speculative_config: {method: mtp,
// num_speculative_tokens: k}`): each step a decoding request carries k draft tokens
// proposed by the model's own multi-token-prediction layer(s) in the step before; the
// target verifies them in one forward pass of 1 + k query tokens per request; a prefix of
// the drafts is accepted and the step emits the accepted drafts plus one token sampled by
// the target (vllm/v1/core/sched/scheduler.py: schedule() and update_from_output();
// vllm/v1/spec_decode/eagle.py: the proposer). docs/SPECULATIVE.md has the rules.
//
// Acceptance is drawn, not simulated token by token: `acceptance[i]` is vLLM's
// per-position acceptance rate (vllm/v1/spec_decode/metrics.py: accepted tokens at position
// i / drafts), the probability that drafts 0..i are all accepted, so the rates are
// non-increasing. One uniform draw u per request and step decides: drafts i with
// u < acceptance[i] are accepted. The draw is a function of the request's id and its output
// position only, so results do not depend on ranks, threads or batch order.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/setting.h"
#include "model/model_card.h"

namespace fleetsim {

// vLLM's own MTP benchmark with 8 draft tokens (GSM8K, temperature 0, concurrency 64;
// vLLM PR 48892 "[Model Runner V2][Spec Decode] Add multi-layer MTP speculator", the table
// "Per-position acceptance (%)": 75.68, 60.11, 49.76, 41.13, 35.38, 29.80, 26.08, 22.29).
// A published figure for one workload and model, not a Qwen3.5 measurement: acceptance
// falls with context and varies by task (vLLM issue 47602: Qwen3.6-27B position 0 at
// 93.5 % with 2K tokens of context, 72.1 % at 30K), so set `acceptance` for a study.
inline constexpr std::array<double, 8> kDefaultMtpAcceptance = {0.7568, 0.6011, 0.4976, 0.4113,
                                                                0.3538, 0.2980, 0.2608, 0.2229};

// The resolved speculation of one engine (off when num_tokens is 0).
struct SpeculativeDecoding {
  int num_tokens = 0;
  std::vector<double> acceptance;  // one per draft position
  bool acceptance_defaulted = false;
  bool enabled() const { return num_tokens > 0; }
};

// Applies vLLM's and fleetsim's refusals: a method other than mtp, a model card without
// MTP layers, k < 1 inside speculative_config, rates outside [0, 1], increasing rates, a
// list whose length is not k, and k beyond the default's 8 positions without a list.
// `num_tokens` 0 means off (the inspect command line's default).
SpeculativeDecoding ResolveSpeculative(const ModelCard& card, const std::string& method,
                                       int num_tokens,
                                       const std::optional<std::vector<double>>& acceptance,
                                       const SettingError& error);

// "off", or "mtp, k=2, acceptance 0.7568 0.6011 (default: vLLM PR 48892)" for inspect and
// /provenance.
std::string Describe(const SpeculativeDecoding& spec);

// How many of `drafts` scheduled draft tokens the target accepts for the request with
// `request_id`, in the step that starts at output position `output_position`.
int64_t AcceptedDrafts(const SpeculativeDecoding& spec, int64_t request_id, int64_t output_position,
                       int64_t drafts);

}  // namespace fleetsim
