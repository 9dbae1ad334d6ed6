// Builds a performance bundle for any model card on any catalog GPU from the analytic
// kernel model (perf/analytic_kernels.h), in the bundle format the simulator reads, and
// caches generated bundles so that a fresh machine needs nothing from ../shared.
//
//   WriteAnalyticBundle(card, hardware, {1, 2, 4, 8}, "out/qwen3.8-27b/H200-SXM");
//   std::string dir = CachedAnalyticBundle(card, hardware);   // builds on first use
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/engine_config.h"
#include "model/hardware.h"
#include "model/model_card.h"
#include "perf/layer_kernels.h"

namespace fleetsim {

// Measured latencies (microseconds) that replace the analytic ones where they exist, for
// one TP degree: a kernel-db bundle is an analytic bundle with these substituted.
class KernelOverrides {
 public:
  virtual ~KernelOverrides() = default;
  virtual std::optional<double> DenseUs(Kernel kernel, int64_t tokens) const = 0;
  virtual std::optional<double> PerSequenceUs(Kernel kernel, int64_t sequences) const = 0;
  virtual std::optional<double> GdnUs(Kernel kernel, int64_t prefill_tokens,
                                      int64_t n_decode) const = 0;
  // A decode-only attention call: `n_decode` sequences over `kv` tokens each.
  virtual std::optional<double> AttentionDecodeUs(int64_t n_decode, int64_t kv) const = 0;
};
using OverridesForTp = std::function<std::unique_ptr<KernelOverrides>(int tp)>;

// How a bundle is built: meta.yaml's source map (key, value, in order) and, for kernel-db,
// the overrides.
struct BundleRecipe {
  std::vector<std::pair<std::string, std::string>> source = {{"kind", "analytic"},
                                                             {"tool", "fleetsim"}};
  OverridesForTp overrides;  // empty: analytic only
};

// TP degrees 1, 2, 4, 8 that fit one node of `hardware` and divide the model's heads.
std::vector<int> DefaultTpDegrees(const ModelCard& card, const HardwareSpec& hardware);

// Writes meta.yaml and tp<N>/ tables under `dir` (replacing what was there, atomically
// by rename). `dir` must be new, empty or a bundle fleetsim wrote: any other folder is an
// InputError, left untouched. A TP the model cannot run (one that does not divide the
// heads) is the error `error` builds for the setting (tensor_parallel_size); by default
// an InputError naming the setting, so that a caller can say where the TP came from.
// `engine`: the instance group's engine settings (its tensor_parallel_size aside); they
// decide the attention backend and decode kernel the attention table prices, the block size
// and the weights' quantization, each per TP as the engine resolves them there (meta.yaml's
// engine_resolved.per_tp says which, and why).
void WriteAnalyticBundle(const ModelCard& card, const HardwareSpec& hardware,
                         const std::vector<int>& tps, const std::string& dir,
                         const SettingError& error = {}, const EngineConfig& engine = {});
// The same with a recipe; kernel origins (measured / analytic / mixed) go to meta.yaml.
void WriteBundle(const ModelCard& card, const HardwareSpec& hardware, const std::vector<int>& tps,
                 const std::string& dir, const BundleRecipe& recipe, const SettingError& error = {},
                 const EngineConfig& engine = {});

// The cached analytic bundle for (model, hardware, the group's engine settings) at the
// default TP degrees the engine can run at, built on first use under
// <cache>/bundles/<model>/<hardware>/ (CacheRoot(): $FLEETSIM_CACHE, else
// $XDG_CACHE_HOME/fleetsim, else ~/.cache/fleetsim), in the folder AnalyticCacheFolder
// names: a new generator version, an edited config.json or catalog entry, or other engine
// settings that change the attention plan, layout or weights build a new folder, and
// concurrent processes never see a bundle replaced under them.
std::string CachedAnalyticBundle(const ModelCard& card, const HardwareSpec& hardware,
                                 const EngineConfig& engine = {});

// "<generator version>-<16 hex digits>": the version, and a fingerprint of the model's
// config.json, the GPU's catalog file and the engine settings the bundle depends on.
std::string AnalyticCacheFolder(const ModelCard& card, const HardwareSpec& hardware,
                                const EngineConfig& engine = {});

// The fingerprint of the model's config.json and the GPU's catalog file (16 hex digits),
// which meta.yaml records as inputs_fingerprint: `bundle prune-cache` keeps a cached bundle
// of the current generator whose inputs are the files as they are now.
std::string AnalyticInputsFingerprint(const ModelCard& card, const HardwareSpec& hardware);

// The engine settings an analytic bundle depends on (all but TP, batch limits and KV
// budget), as "key=value" lines; empty for vLLM's defaults. Part of the cache fingerprint.
std::string BundleEngineKey(const EngineConfig& engine);

// The generator version cached bundles are built by, e.g. "analytic-10".
const char* AnalyticGeneratorVersion();

// Cached analytic bundles no current build reads, under the cache CachedAnalyticBundle
// uses: folders of other generator versions or of inputs since edited (for a model and
// GPU the catalogs still know), and staging folders an interrupted build left behind
// (untouched for an hour, so a build in progress keeps its own). Nothing else in the
// cache (a bundle `fleetsim bundle build` wrote there, say) is listed.
std::vector<std::string> StaleCachedBundles();

}  // namespace fleetsim
