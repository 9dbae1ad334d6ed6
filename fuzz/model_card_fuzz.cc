// The model card reader (model/model_card.h) on the input as a config.json, then what
// the engine derives from an accepted card at TP 1 (weights, KV bytes, the TP check).
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_input.h"
#include "model/cache_shapes.h"
#include "model/model_card.h"
#include "model/weight_count.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = fleetsim::fuzz::WriteInput("config.json", data, size);
  fleetsim::fuzz::ExpectInputErrorOnly([&] {
    const fleetsim::ModelCard card = fleetsim::LoadModelCard(path, "fuzz");
    (void)card.ProfilingDepth();
    (void)card.DistinctLayerTypes();
    (void)card.CountMoeLayers();
    if (fleetsim::CheckTensorParallel(card, 1)) return;
    (void)fleetsim::CountWeights(card, 1);
    (void)fleetsim::KvHeadsPerRank(card, 1);
    (void)fleetsim::AttentionBytesPerTokenPerLayer(card, 1, card.dtype);
  });
  return 0;
}
