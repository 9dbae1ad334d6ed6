#include "perf/layer_kernels.h"

#include <array>

namespace fleetsim {
namespace {

// The regimes a regime kernel runs in, as bits (1 << Regime); 0 for a regime-free one.
constexpr unsigned kPrefillBit = 1u << static_cast<int>(Regime::kPrefill);
constexpr unsigned kDecodeBit = 1u << static_cast<int>(Regime::kDecode);
constexpr unsigned kMixedBit = 1u << static_cast<int>(Regime::kMixed);

struct KernelInfo {
  constexpr KernelInfo(Kernel k, std::string_view n, BundleFile f, unsigned r = 0)
      : kernel(k), name(n), file(f), regimes(r) {}
  Kernel kernel;
  std::string_view name;
  BundleFile file;
  unsigned regimes;
};

// A GDN layer's historical regime kernels: the prefill's conv, its glue and the chunked
// delta rule run in prefill and mixed steps; the conv update and recurrent step of a
// decode-only step; the recurrent step of a mixed step's decodes (vLLM runs it apart).
constexpr KernelInfo kKernels[] = {
    {Kernel::kEmbedding, "embedding", BundleFile::kDense},
    {Kernel::kFinalLayernorm, "final_layernorm", BundleFile::kDense},
    {Kernel::kLayernorm, "layernorm", BundleFile::kDense},
    {Kernel::kQkvProj, "qkv_proj", BundleFile::kDense},
    {Kernel::kQkNorm, "qk_norm", BundleFile::kDense},
    {Kernel::kRotaryEmb, "rotary_emb", BundleFile::kDense},
    {Kernel::kQkNormRope, "qk_norm_rope", BundleFile::kDense},
    {Kernel::kAttnGlue, "attn_glue", BundleFile::kDense},
    {Kernel::kOProj, "o_proj", BundleFile::kDense},
    {Kernel::kGateUpProj, "gate_up_proj", BundleFile::kDense},
    {Kernel::kActFn, "act_fn", BundleFile::kDense},
    {Kernel::kDownProj, "down_proj", BundleFile::kDense},
    {Kernel::kGdnInProj, "gdn_in_proj", BundleFile::kDense},
    {Kernel::kGdnGlue, "gdn_glue", BundleFile::kDense},
    {Kernel::kGdnNorm, "gdn_norm", BundleFile::kDense},
    {Kernel::kGdnOutProj, "gdn_out_proj", BundleFile::kDense},
    {Kernel::kMtpFc, "mtp_fc", BundleFile::kDense},
    {Kernel::kLmHead, "lm_head", BundleFile::kPerSequence},
    {Kernel::kSampler, "sampler", BundleFile::kPerSequence},
    {Kernel::kAttention, "attention", BundleFile::kAttention, kPrefillBit | kDecodeBit | kMixedBit},
    {Kernel::kGdnConvPrefill, "gdn_conv_prefill", BundleFile::kLinearAttention,
     kPrefillBit | kMixedBit},
    {Kernel::kGdnPostConv, "gdn_post_conv", BundleFile::kLinearAttention, kPrefillBit | kMixedBit},
    {Kernel::kGdnPrefill, "gdn_prefill", BundleFile::kLinearAttention, kPrefillBit | kMixedBit},
    {Kernel::kGdnConvDecode, "gdn_conv_decode", BundleFile::kLinearAttention, kDecodeBit},
    {Kernel::kGdnDecode, "gdn_decode", BundleFile::kLinearAttention, kDecodeBit},
    {Kernel::kGdnDecodeMixed, "gdn_decode_mixed", BundleFile::kLinearAttention, kMixedBit},
    {Kernel::kGdnCore, "gdn_core", BundleFile::kLinearAttention,
     kPrefillBit | kDecodeBit | kMixedBit},
    {Kernel::kMoe, "moe", BundleFile::kMoe},
};

constexpr std::array<Kernel, std::size(kKernels)> kAllKernels = [] {
  std::array<Kernel, std::size(kKernels)> all{};
  for (std::size_t i = 0; i < all.size(); ++i)
    all[i] = kKernels[i].kernel;
  return all;
}();

constexpr bool InEnumOrder() {
  for (std::size_t i = 0; i < std::size(kKernels); ++i) {
    if (static_cast<std::size_t>(kKernels[i].kernel) != i) return false;
  }
  return true;
}
static_assert(InEnumOrder(), "kKernels is indexed by Kernel");

const KernelInfo& InfoOf(Kernel kernel) {
  return kKernels[static_cast<std::size_t>(kernel)];
}

// StepCostModel charges these per layer (head: per step); ENGINE_SEMANTICS.md section 9.
constexpr KernelSpec kHeadKernels[] = {{Kernel::kEmbedding},
                                       {Kernel::kFinalLayernorm},
                                       {Kernel::kLmHead},
                                       {Kernel::kSampler, 1, Need::kIfPresent}};
constexpr KernelSpec kFullAttentionKernels[] = {
    {Kernel::kLayernorm, 2},
    {Kernel::kQkvProj},
    {Kernel::kQkNorm, 1, Need::kIfQkNorm, Kernel::kQkNormRope},
    {Kernel::kRotaryEmb, 1, Need::kAlways, Kernel::kQkNormRope},
    {Kernel::kQkNormRope, 1, Need::kIfPresent},
    {Kernel::kAttnGlue, 1, Need::kIfPresent},
    {Kernel::kOProj},
    {Kernel::kAttention}};
constexpr KernelSpec kLinearAttentionKernels[] = {{Kernel::kLayernorm, 2},
                                                  {Kernel::kGdnInProj},
                                                  {Kernel::kGdnGlue, 1, Need::kIfPresent},
                                                  {Kernel::kGdnNorm, 1, Need::kIfPresent},
                                                  {Kernel::kGdnOutProj},
                                                  {Kernel::kGdnConvPrefill, 1, Need::kIfPresent},
                                                  {Kernel::kGdnPostConv, 1, Need::kIfPresent},
                                                  {Kernel::kGdnPrefill, 1, Need::kIfPresent},
                                                  {Kernel::kGdnConvDecode, 1, Need::kIfPresent},
                                                  {Kernel::kGdnDecode, 1, Need::kIfPresent},
                                                  {Kernel::kGdnDecodeMixed, 1, Need::kIfPresent},
                                                  {Kernel::kGdnCore, 1, Need::kIfPresent}};
constexpr KernelSpec kMlpKernels[] = {{Kernel::kGateUpProj}, {Kernel::kActFn}, {Kernel::kDownProj}};
constexpr KernelSpec kMoeKernels[] = {{Kernel::kMoe}};
constexpr KernelSpec kMtpKernels[] = {{Kernel::kMtpFc, 1, Need::kIfMtpSpeculation}};

}  // namespace

Regime RegimeOf(bool has_prefill, bool has_decode) {
  if (has_prefill && has_decode) return Regime::kMixed;
  return has_prefill ? Regime::kPrefill : Regime::kDecode;
}

std::string_view NameOf(Kernel kernel) {
  return InfoOf(kernel).name;
}

std::string_view NameOf(Regime regime) {
  switch (regime) {
    case Regime::kPrefill:
      return "prefill";
    case Regime::kDecode:
      return "decode";
    case Regime::kMixed:
      return "mixed";
  }
  return "?";
}

std::optional<Kernel> KernelNamed(std::string_view name) {
  for (const KernelInfo& info : kKernels) {
    if (info.name == name) return info.kernel;
  }
  return std::nullopt;
}

std::span<const Kernel> AllKernels() {
  return kAllKernels;
}

BundleFile FileOf(Kernel kernel) {
  return InfoOf(kernel).file;
}

bool IsRegimeKernel(Kernel kernel) {
  return InfoOf(kernel).regimes != 0;
}

bool RunsIn(Kernel kernel, Regime regime) {
  const unsigned regimes = InfoOf(kernel).regimes;
  return regimes == 0 || (regimes & (1u << static_cast<int>(regime))) != 0;
}

std::string_view NameOf(LayerKind kind) {
  switch (kind) {
    case LayerKind::kHead:
      return "head";
    case LayerKind::kFullAttention:
      return "full_attention";
    case LayerKind::kLinearAttention:
      return "linear_attention";
    case LayerKind::kMlp:
      return "mlp";
    case LayerKind::kMoe:
      return "moe";
    case LayerKind::kMtp:
      return "mtp";
  }
  return "?";
}

int LayerCount(const ModelCard& card, LayerKind kind) {
  switch (kind) {
    case LayerKind::kHead:
      return 1;
    case LayerKind::kFullAttention:
      return card.CountLayers(LayerType::kFullAttention);
    case LayerKind::kLinearAttention:
      return card.CountLayers(LayerType::kLinearAttention);
    case LayerKind::kMlp:
      return card.NumLayers() - card.CountMoeLayers();
    case LayerKind::kMoe:
      return card.CountMoeLayers();
    case LayerKind::kMtp:
      return card.mtp_layers > 0 ? 1 : 0;
  }
  return 0;
}

std::span<const KernelSpec> KernelsOf(LayerKind kind) {
  switch (kind) {
    case LayerKind::kHead:
      return kHeadKernels;
    case LayerKind::kFullAttention:
      return kFullAttentionKernels;
    case LayerKind::kLinearAttention:
      return kLinearAttentionKernels;
    case LayerKind::kMlp:
      return kMlpKernels;
    case LayerKind::kMoe:
      return kMoeKernels;
    case LayerKind::kMtp:
      return kMtpKernels;
  }
  return {};
}

bool Needed(const KernelSpec& spec, const ModelCard& card) {
  return spec.need == Need::kAlways || (spec.need == Need::kIfQkNorm && card.attention.qk_norm);
}

}  // namespace fleetsim
