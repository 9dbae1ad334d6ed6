// Builds a performance bundle for any model card on any catalog GPU from the analytic
// kernel model (perf/analytic_kernels.h), in the bundle format the simulator reads, and
// caches generated bundles so that a fresh machine needs nothing from ../shared.
//
//   WriteAnalyticBundle(card, hardware, {1, 2, 4, 8}, "out/qwen3.8-27b/H200-SXM");
//   std::string dir = CachedAnalyticBundle(card, hardware);   // builds on first use
#pragma once

#include <string>
#include <vector>

#include "model/hardware.h"
#include "model/model_card.h"

namespace fleetsim {

// TP degrees 1, 2, 4, 8 that fit one node of `hardware` and divide the model's heads.
std::vector<int> DefaultTpDegrees(const ModelCard& card, const HardwareSpec& hardware);

// Writes meta.yaml and tp<N>/ tables under `dir` (replacing what was there, atomically
// by rename). A TP that does not divide the heads is an InputError naming the field.
void WriteAnalyticBundle(const ModelCard& card, const HardwareSpec& hardware,
                         const std::vector<int>& tps, const std::string& dir);

// The cached analytic bundle for (model, hardware) at the default TP degrees, built on
// first use under $FLEETSIM_CACHE, else models/<model>/bundles/<hardware>/ (git-ignored).
// Rebuilt when it was made by another generator version.
std::string CachedAnalyticBundle(const ModelCard& card, const HardwareSpec& hardware);

}  // namespace fleetsim
