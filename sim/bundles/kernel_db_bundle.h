// Bundles composed from measured per-op kernel tables (aiconfigurator: A100, H100, H200):
// a kernel whose shape the tables measured takes the measured latencies (interpolated
// along tokens or batch), every other kernel the calibrated analytic model's; meta.yaml
// records each kernel's origin per TP.
//
// Measured where the tables have the exact shape: GEMMs by their (n, k) (projections,
// lm_head), interpolated along m; the GDN sub-kernels of the model's per-GPU head counts
// (conv and chunked delta rule from one-sequence prefills, conv update and recurrent step
// from decode batches; only the H200 has a GDN table); decode-only attention at the
// model's per-GPU heads (head_dim 64 or 128), bilinear between the table's (batch, keys)
// rows and never beyond them, each row capped by the table's smaller ones at more keys.
// Analytic: prefill and mixed attention (the tables have no prefill over cached history,
// and a mixed step is one call the tables never timed), norms and glue, gdn_post_conv,
// gdn_decode_mixed, the sampler, MoE.
//
//   WriteKernelDbBundle(card, h200, {1, 2, 4, 8}, "../shared/data/profiles/aiconfigurator", "out");
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engine/engine_config.h"
#include "model/hardware.h"
#include "model/model_card.h"

namespace fleetsim {

// The aiconfigurator system folder of a catalog GPU ("h200_sxm"), if it has tables.
std::optional<std::string> KernelDbSystemFor(const HardwareSpec& hardware);
// The same, or an InputError naming the GPUs with tables.
std::string KernelDbSystemOf(const HardwareSpec& hardware);

// A TP the model cannot run is the error `error` builds for the setting, as in
// WriteAnalyticBundle.
void WriteKernelDbBundle(const ModelCard& card, const HardwareSpec& hardware,
                         const std::vector<int>& tps, const std::string& aiconfigurator_dir,
                         const std::string& dir, const SettingError& error = {});

}  // namespace fleetsim
