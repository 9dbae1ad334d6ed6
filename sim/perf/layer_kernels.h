// The kernels a bundle prices, by identity, and which of them each layer kind charges in
// which batch regime: the one list the cost model (step_cost.h), `bundle coverage`, the
// analytic and kernel-db builders and the loader share. Names appear only in files; code
// holds a Kernel, parsed once with KernelNamed.
//
//   for (const KernelSpec& spec : KernelsOf(LayerKind::kFullAttention))
//     if (FileOf(spec.kernel) == BundleFile::kDense) charge(NameOf(spec.kernel), spec.times);
//   KernelNamed("qkv_proj");   // Kernel::kQkvProj; nullopt for a name fleetsim does not know
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "model/model_card.h"
#include "perf/bundle_format.h"

namespace fleetsim {

// In the order the analytic builder writes them within each file.
enum class Kernel {
  // dense.csv
  kEmbedding,
  kFinalLayernorm,
  kLayernorm,
  kQkvProj,
  kQkNorm,
  kRotaryEmb,
  kQkNormRope,  // Qwen3.5's one Triton kernel for q/k norm, rope and the output gate
  kAttnGlue,
  kOProj,
  kGateUpProj,
  kActFn,
  kDownProj,
  kGdnInProj,
  kGdnGlue,
  kGdnNorm,
  kGdnOutProj,
  kMtpFc,  // the MTP module's fc projection (2 x hidden -> hidden), once per draft pass
  // per_sequence.csv
  kLmHead,
  kSampler,
  // attention.csv (one kernel, three regimes)
  kAttention,
  // linear_attention.csv: the historical regime kernels, or the packed gdn_core alone
  kGdnConvPrefill,
  kGdnPostConv,
  kGdnPrefill,
  kGdnConvDecode,
  kGdnDecode,
  kGdnDecodeMixed,
  kGdnCore,
  // moe.csv
  kMoe,
};

// A step's batch regime: prefills only, decodes only, or both.
enum class Regime { kPrefill, kDecode, kMixed };
inline constexpr Regime kRegimes[] = {Regime::kPrefill, Regime::kDecode, Regime::kMixed};
Regime RegimeOf(bool has_prefill, bool has_decode);  // not both false

// "qkv_proj", "prefill", ...
std::string_view NameOf(Kernel kernel);
std::string_view NameOf(Regime regime);
// The kernel a file's name stands for; nullopt for one fleetsim does not know (a measured
// bundle may carry such rows; the cost model does not charge them).
std::optional<Kernel> KernelNamed(std::string_view name);
// Every kernel, in enum order.
std::span<const Kernel> AllKernels();

// The table a kernel's rows are in.
BundleFile FileOf(Kernel kernel);
// Whether the kernel's rows are split by regime (attention, GDN), and if so whether it
// runs in `regime`. A regime-free kernel (dense, per-sequence, MoE) runs in all three.
bool IsRegimeKernel(Kernel kernel);
bool RunsIn(Kernel kernel, Regime regime);

// The block types of a model, in coverage's order; kHead is the once-per-step part.
// kMtp is the MTP module's own kernel (its fc), charged once per draft pass with MTP
// speculation; its decoder layer charges the kFullAttention and kMlp / kMoe kernels.
enum class LayerKind { kHead, kFullAttention, kLinearAttention, kMlp, kMoe, kMtp };
inline constexpr LayerKind kLayerKinds[] = {
    LayerKind::kHead, LayerKind::kFullAttention, LayerKind::kLinearAttention,
    LayerKind::kMlp,  LayerKind::kMoe,           LayerKind::kMtp};
std::string_view NameOf(LayerKind kind);  // "head", "full_attention", ...
// How many layers of the kind the model has (kHead: 1; kMtp: 1 when the model ships MTP
// layers -- one fc for the module -- else 0).
int LayerCount(const ModelCard& card, LayerKind kind);

// Whether a bundle must have a kernel: always, only for models with q/k norms, only for an
// engine speculating with MTP (the cost model refuses a bundle without it then), or not at
// all (glue a profile may or may not bind, charged when present).
enum class Need { kAlways, kIfQkNorm, kIfMtpSpeculation, kIfPresent };
// One kernel a layer kind charges, `times` per layer (kHead: per step, per_sequence.csv
// kernels per sampled sequence). A needed kernel may instead be carried by `fused_into`.
struct KernelSpec {
  constexpr KernelSpec(Kernel k, int n = 1, Need needed = Need::kAlways,
                       std::optional<Kernel> fused = std::nullopt)
      : kernel(k), times(n), need(needed), fused_into(fused) {}
  Kernel kernel;
  int times;
  Need need;
  std::optional<Kernel> fused_into;
};
// The kind's kernels, in the order vLLM runs them. kLinearAttention lists its regime
// kernels too (each kIfPresent; a bundle has the historical ones or gdn_core); the cost
// model charges every kernel linear_attention.csv has in the step's regime.
std::span<const KernelSpec> KernelsOf(LayerKind kind);
bool Needed(const KernelSpec& spec, const ModelCard& card);

}  // namespace fleetsim
