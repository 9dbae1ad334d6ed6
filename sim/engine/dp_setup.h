// Building a data-parallel expert-parallel engine (engine/dp_engine.h) from one rank's
// EngineSetup: the KV budget of a rank that holds only its shard of the experts, and the
// ranks themselves. Shared by `validate` (and the cluster's DP groups when they come).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "engine/dp_engine.h"
#include "engine/engine_setup.h"
#include "model/hardware.h"
#include "model/model_card.h"

namespace fleetsim {

// Why vLLM's DP x EP does not apply to this model, or nullopt when it does: expert
// parallelism needs MoE layers.
std::optional<std::string> DpExpertParallelViolation(const ModelCard& card, int dp,
                                                     bool enable_expert_parallel);

// The routed experts' weight bytes one rank of a TP-tp engine holds without EP (vLLM's
// FusedMoE: w13 = 2 x intermediate x hidden and w2 = intermediate x hidden per expert,
// split by TP), at the model dtype.
int64_t ExpertWeightBytesPerTpRank(const ModelCard& card, int tp);

// A rank's KV budget under DP x EP with the memory rule of engine_setup.h: the weights
// per rank are CountWeights' with the experts split over DP x TP instead of TP. The budget
// as given when it names num_gpu_blocks or bytes, or has no hardware.
KvBudget DpExpertParallelKvBudget(const ModelCard& card, int tp, int dp, KvBudget budget);

// vLLM 0.19's default CUDA-graph capture sizes (config/vllm.py): 1, 2, 4, every 8 below 256,
// then every 16, up to min(2 x max_num_seqs, 512, max_num_batched_tokens). Returns the
// largest size of that list, which vLLM makes max_cudagraph_capture_size.
int64_t DefaultCudagraphCaptureTokens(int64_t max_num_seqs, int64_t max_num_batched_tokens);
// The capture size a batch of `tokens` runs at (cudagraph_dispatcher.py: the smallest size
// of the default list at or above it), or 0 past the largest, `capture_tokens` (eager).
int64_t CudagraphPaddedTokens(int64_t tokens, int64_t capture_tokens);

// `dp` ranks of `setup`'s engine, the dispatch priced over `dp` GPUs of `hardware`;
// `capture_tokens` 0 when CUDA graphs are off.
std::unique_ptr<DpEngine> MakeDpEngine(const EngineSetup& setup, int dp,
                                       const HardwareSpec& hardware, int64_t capture_tokens);

}  // namespace fleetsim
