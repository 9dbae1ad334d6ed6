// Parameters and weight bytes one tensor-parallel rank holds, for the KV-memory budget
// (`gpu_memory_utilization * memory - weights`). Text and vision towers are counted
// separately because a multimodal checkpoint loads its vision encoder even for text.
//
// Sharding follows vLLM's layers: column/row-parallel projections, experts and the
// vocab-parallel embedding and lm_head are split by TP; norms, the MoE router and
// per-head gates are replicated; KV projections hold max(1, kv_heads / tp) heads (whole
// copies when tp > kv_heads). The vision encoder is sharded by TP too (vLLM's default
// `mm_encoder_tp_mode`). Multi-token-prediction layers are loaded only with MTP
// speculation, and counted only when asked for (`with_mtp`): Qwen3.5's MTP module
// (vllm/model_executor/models/qwen3_5_mtp.py, Qwen3_5MultiTokenPredictor) is
// `mtp_num_hidden_layers` full-attention decoder layers with the model's MLP (a MoE block
// for MoE models), the `fc` projection 2 x hidden -> hidden (ColumnParallelLinear: split by
// TP) and three norms (pre_fc_norm_hidden, pre_fc_norm_embedding, norm); its embed_tokens
// and lm_head are the target's (vllm/v1/spec_decode/llm_base_proposer.py
// _maybe_share_embeddings / _maybe_share_lm_head share them for MTP), so they are not
// counted twice. Its modules are named "mtp.layers.0...." and "mtp.fc" for the
// quantization's exclusions (the AWQ 27B leaves "mtp" unconverted). Quantized checkpoints
// (model/quantization.h) store their linear projections in fewer bytes; embeddings, lm_head, norms,
// biases, the GDN conv1d and gates stay at the model dtype.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "model/model_card.h"
#include "model/quantization.h"

namespace fleetsim {

struct WeightCount {
  int64_t text_params = 0;    // whole model, unsharded
  int64_t vision_params = 0;  // whole model, unsharded
  int64_t text_params_per_rank = 0;
  int64_t vision_params_per_rank = 0;
  int64_t quantized_params_per_rank = 0;  // both towers (and MTP): those stored quantized
  // The MTP module, when counted (with_mtp): whole model, one rank, and its bytes on one
  // rank (part of bytes_per_rank).
  int64_t mtp_params = 0;
  int64_t mtp_params_per_rank = 0;
  int64_t mtp_bytes_per_rank = 0;
  // Both towers and the MTP module when counted: quantized linear weights at the format's
  // bytes (scales and zero points included), everything else at the model dtype.
  int64_t bytes_per_rank = 0;
};

// With the checkpoint's own quantization (card.quantization), or none.
WeightCount CountWeights(const ModelCard& card, int tp);
// With the quantization the engine resolved (a group may set one); `with_mtp`: the MTP
// module is loaded too (MTP speculative decoding on).
WeightCount CountWeights(const ModelCard& card, int tp, const Quantization& quant,
                         bool with_mtp = false);

// Whether counting the card's weights (at TP 1, unquantized, MTP included, at 4 bytes a
// parameter) would overflow 64 bits in any step: only a card whose sizes are far past any
// real model's. LoadModelCard refuses such a card, so every count above is exact.
bool WeightCountOverflows(const ModelCard& card);

// Why vLLM would not load this quantized layout at this TP, or nullopt when it would:
// - a 4-bit format (AWQ, GPTQ) over the GDN gate projection in_proj_ba, whose packed
//   layout vLLM's Qwen3.5/Qwen3-Next loaders do not verify (the published 4-bit
//   checkpoints leave it unquantized; ../shared/seeds/hybrid-linear-attention.txt);
// - a row-parallel layer whose inputs per rank are not whole groups (awq.py / gptq.py:
//   "The input size is not aligned with the quantized weight shape");
// - an AWQ column-parallel layer whose outputs per rank are not whole int32 words of eight
//   4-bit weights ("The output size is not aligned with the quantized weight shape").
std::optional<std::string> QuantizedLayoutViolation(const ModelCard& card, int tp,
                                                    const Quantization& quant);

}  // namespace fleetsim
