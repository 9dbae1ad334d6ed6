#include "perf/bundle_format.h"

#include <algorithm>
#include <cctype>

#include "perf/layer_kernels.h"

namespace fleetsim {
namespace {

using namespace column;

constexpr std::string_view kDenseColumns[] = {kLayer, kTokens, kTimeUs};
constexpr std::string_view kPerSequenceColumns[] = {kLayer, kSequences, kTimeUs};
constexpr std::string_view kAttentionColumns[] = {kPrefillChunk, kKvPrefill, kNDecode, kKvDecode,
                                                  kTimeUs};
constexpr std::string_view kLinearAttentionColumns[] = {kLayer, kPrefillTokens, kNDecode, kTimeUs};
constexpr std::string_view kMoeColumns[] = {kTokens, kActivatedExperts, kTimeUs};
constexpr std::string_view kAllreduceColumns[] = {kBytes, kTimeUs};
constexpr std::string_view kSkewFitColumns[] = {kPc,      kNLabel, kSkewRateLabel, kKvBigLabel,
                                                kKpLabel, kAlpha,  kNSamples};

// What a file's rows are, for the docs.
std::string_view RowsOf(BundleFile file) {
  switch (file) {
    case BundleFile::kDense:
      return "one curve per kernel, by the step's tokens";
    case BundleFile::kPerSequence:
      return "one curve per kernel, by the step's sampled sequences";
    case BundleFile::kAttention:
      return "the attention kernel; a row's regime is which of `prefill_chunk` and `n_decode` are "
             "non-zero. `prefill_key` may stand for `kv_prefill`; rows with `decode_q_len` > 1 "
             "are skipped";
    case BundleFile::kLinearAttention:
      return "GDN regime kernels; a row's regime is which of `prefill_tokens` and `n_decode` are "
             "non-zero";
    case BundleFile::kMoe:
      return "the MoE block; with an `ep` column, only rows with `ep` = 1";
    case BundleFile::kAllreduce:
      return "optional, measured all-reduces (fleetsim does not write it)";
    case BundleFile::kSkewFit:
      return "optional, the decode-skew alpha per bucket of (prefill chunk, decodes, skew rate, "
             "longest context, prefill history), with `meta.yaml`'s `skew_fit` block (bucket "
             "edges, `alpha_default` per TP): LLMServingSim's format; fleetsim's analytic bundles "
             "write it from the analytic kernels";
  }
  return "";
}

// The columns joined by commas.
std::string Joined(std::span<const std::string_view> columns) {
  std::string text;
  for (const std::string_view name : columns)
    text += (text.empty() ? "" : ",") + std::string(name);
  return text;
}

std::string Code(std::string_view text) {
  return "`" + std::string(text) + "`";
}

std::string RegimesText(Kernel kernel) {
  if (!IsRegimeKernel(kernel)) return "all";
  std::string text;
  for (const Regime regime : kRegimes) {
    if (RunsIn(kernel, regime)) text += (text.empty() ? "" : ", ") + std::string(NameOf(regime));
  }
  return text;
}

std::string NeedText(const KernelSpec& spec) {
  std::string text = spec.need == Need::kAlways             ? "required"
                     : spec.need == Need::kIfQkNorm         ? "with q/k norms"
                     : spec.need == Need::kIfMtpSpeculation ? "with MTP speculation"
                                                            : "when present";
  if (spec.fused_into) text += ", or in " + Code(NameOf(*spec.fused_into));
  return text;
}

}  // namespace

std::string_view FileName(BundleFile file) {
  switch (file) {
    case BundleFile::kDense:
      return "dense.csv";
    case BundleFile::kPerSequence:
      return "per_sequence.csv";
    case BundleFile::kAttention:
      return "attention.csv";
    case BundleFile::kLinearAttention:
      return "linear_attention.csv";
    case BundleFile::kMoe:
      return "moe.csv";
    case BundleFile::kAllreduce:
      return "allreduce.csv";
    case BundleFile::kSkewFit:
      return "skew_fit.csv";
  }
  return "";
}

std::span<const std::string_view> ColumnsOf(BundleFile file) {
  switch (file) {
    case BundleFile::kDense:
      return kDenseColumns;
    case BundleFile::kPerSequence:
      return kPerSequenceColumns;
    case BundleFile::kAttention:
      return kAttentionColumns;
    case BundleFile::kLinearAttention:
      return kLinearAttentionColumns;
    case BundleFile::kMoe:
      return kMoeColumns;
    case BundleFile::kAllreduce:
      return kAllreduceColumns;
    case BundleFile::kSkewFit:
      return kSkewFitColumns;
  }
  return {};
}

std::string HeaderLine(BundleFile file) {
  return Joined(ColumnsOf(file)) + "\n";
}

std::string TpFolder(int tp) {
  return "tp" + std::to_string(tp);
}

std::optional<int> TpOfFolder(std::string_view name) {
  constexpr std::string_view kPrefix = "tp";
  if (!name.starts_with(kPrefix)) return std::nullopt;
  const std::string_view digits = name.substr(kPrefix.size());
  if (digits.empty() || !std::all_of(digits.begin(), digits.end(), ::isdigit)) return std::nullopt;
  return std::stoi(std::string(digits));
}

std::string BundleFormatMarkdown() {
  std::string md = "A bundle is a folder with `" + std::string(kMetaFile) +
                   "` and one `tp<N>/` folder per TP degree, holding these tables (times in "
                   "microseconds):\n\n| file | columns | rows |\n|---|---|---|\n";
  for (const BundleFile file : kBundleFiles) {
    md += "| " + Code(FileName(file)) + " | " + Code(Joined(ColumnsOf(file))) + " | " +
          std::string(RowsOf(file)) + " |\n";
  }
  md +=
      "\nThe kernels each layer kind charges (the head once per step, its "
      "`per_sequence.csv` kernels per sampled sequence; the others per layer):\n\n"
      "| layer kind | kernel | file | regimes | times | needed |\n|---|---|---|---|---|---|\n";
  for (const LayerKind kind : kLayerKinds) {
    for (const KernelSpec& spec : KernelsOf(kind)) {
      md += "| " + std::string(NameOf(kind)) + " | " + Code(NameOf(spec.kernel)) + " | " +
            std::string(FileName(FileOf(spec.kernel))) + " | " + RegimesText(spec.kernel) + " | " +
            std::to_string(spec.times) + " | " + NeedText(spec) + " |\n";
    }
  }
  return md;
}

}  // namespace fleetsim
