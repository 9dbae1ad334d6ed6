#include "engine/speculative.h"

#include <cstdio>

#include "core/hash64.h"
#include "core/random.h"
#include "engine/engine_settings.h"

namespace fleetsim {
namespace {

using namespace engine_settings;

std::string Rate(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", x);
  return text;
}

// Distinguishes this stream from every other one derived from a request id (its block
// hashes, request.cc).
constexpr uint64_t kAcceptanceStream = 0x5EC0DEC0DEULL;

}  // namespace

SpeculativeDecoding ResolveSpeculative(const ModelCard& card, const std::string& method,
                                       int num_tokens,
                                       const std::optional<std::vector<double>>& acceptance,
                                       const SettingError& error) {
  SpeculativeDecoding spec;
  if (num_tokens == 0) {  // off
    if (acceptance) throw error(kSpeculativeAcceptance.key, "given without num_speculative_tokens");
    return spec;
  }
  kNumSpeculativeTokens.Check(num_tokens, error);
  if (method != kSpeculativeMethod.Default()) {
    throw error(kSpeculativeMethod.key(),
                "unknown method '" + method + "' (accepted: mtp; fleetsim models MTP only)");
  }
  if (card.mtp_layers == 0) {
    throw error(kNumSpeculativeTokens.key(),
                card.name +
                    " ships no MTP layers (its config.json has neither "
                    "mtp_num_hidden_layers nor num_nextn_predict_layers), so vLLM's mtp "
                    "method has nothing to draft with");
  }
  spec.num_tokens = num_tokens;
  if (!acceptance) {
    if (num_tokens > static_cast<int>(kDefaultMtpAcceptance.size())) {
      throw error(kSpeculativeAcceptance.key,
                  "the default rates cover " + std::to_string(kDefaultMtpAcceptance.size()) +
                      " draft positions, not " + std::to_string(num_tokens) +
                      "; give one rate per position");
    }
    spec.acceptance.assign(kDefaultMtpAcceptance.begin(),
                           kDefaultMtpAcceptance.begin() + num_tokens);
    spec.acceptance_defaulted = true;
    return spec;
  }
  if (acceptance->size() != static_cast<std::size_t>(num_tokens)) {
    throw error(kSpeculativeAcceptance.key, "has " + std::to_string(acceptance->size()) +
                                                " rates for " + std::to_string(num_tokens) +
                                                " draft positions; give one per position");
  }
  for (std::size_t i = 0; i < acceptance->size(); ++i) {
    const double rate = (*acceptance)[i];
    if (!(rate >= 0.0 && rate <= 1.0)) {
      throw error(kSpeculativeAcceptance.key,
                  "rate " + Rate(rate) + " at position " + std::to_string(i) + " is not in [0, 1]");
    }
    if (i > 0 && rate > (*acceptance)[i - 1]) {
      throw error(kSpeculativeAcceptance.key,
                  "rate " + Rate(rate) + " at position " + std::to_string(i) + " exceeds " +
                      Rate((*acceptance)[i - 1]) +
                      " at the one before: a draft is accepted only after every earlier one "
                      "(vLLM's per-position rates never increase)");
    }
  }
  spec.acceptance = *acceptance;
  return spec;
}

std::string Describe(const SpeculativeDecoding& spec) {
  if (!spec.enabled()) return "off";
  std::string text = "mtp, k=" + std::to_string(spec.num_tokens) + ", acceptance";
  for (const double rate : spec.acceptance)
    text += " " + Rate(rate);
  if (spec.acceptance_defaulted) text += " (default: vLLM PR 48892)";
  return text;
}

int64_t AcceptedDrafts(const SpeculativeDecoding& spec, int64_t request_id, int64_t output_position,
                       int64_t drafts) {
  uint64_t seed = Mix64(kAcceptanceStream + kGoldenGamma);
  seed = Mix64(seed ^ Mix64(static_cast<uint64_t>(request_id) + kGoldenGamma));
  seed = Mix64(seed ^ Mix64(static_cast<uint64_t>(output_position) + kGoldenGamma));
  const double u = Rng(seed).Uniform();
  int64_t accepted = 0;
  while (accepted < drafts && u < spec.acceptance[static_cast<std::size_t>(accepted)])
    ++accepted;
  return accepted;
}

}  // namespace fleetsim
