// Parameters and weight bytes one tensor-parallel rank holds, for the KV-memory budget
// (`gpu_memory_utilization * memory - weights`). Text and vision towers are counted
// separately because a multimodal checkpoint loads its vision encoder even for text.
//
// Sharding follows vLLM's layers: column/row-parallel projections, experts and the
// vocab-parallel embedding and lm_head are split by TP; norms, the MoE router and
// per-head gates are replicated; KV projections hold max(1, kv_heads / tp) heads (whole
// copies when tp > kv_heads). The vision encoder is sharded by TP too (vLLM's default
// `mm_encoder_tp_mode`). Multi-token-prediction layers are not loaded without MTP
// speculation and are not counted.
#pragma once

#include <cstdint>

#include "model/model_card.h"

namespace fleetsim {

struct WeightCount {
  int64_t text_params = 0;    // whole model, unsharded
  int64_t vision_params = 0;  // whole model, unsharded
  int64_t text_params_per_rank = 0;
  int64_t vision_params_per_rank = 0;
  int64_t bytes_per_rank = 0;  // both towers at the model dtype
};

WeightCount CountWeights(const ModelCard& card, int tp);

}  // namespace fleetsim
