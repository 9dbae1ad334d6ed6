// The files of a performance bundle and their columns, named once for the builders that
// write them (bundles/analytic_bundle.h, bundles/kernel_db_bundle.h) and the loader that
// reads them (perf/bundle.h). Which kernels go in which file, per layer kind and regime,
// is perf/layer_kernels.h. docs/BUNDLES.md ("The bundle format") is BundleFormatMarkdown()'s
// text, and a test keeps the two the same.
//
//   <bundle>/meta.yaml
//   <bundle>/tp<N>/dense.csv             layer,tokens,time_us
//   std::ofstream(dir / FileName(BundleFile::kDense)) << HeaderLine(BundleFile::kDense);
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace fleetsim {

// One table of a tp<N>/ folder.
enum class BundleFile {
  kDense,            // per-token kernels, one curve each
  kPerSequence,      // per-sampled-sequence kernels (lm_head, sampler)
  kAttention,        // the attention kernel in its three regimes
  kLinearAttention,  // a GDN layer's regime kernels
  kMoe,              // the MoE block
  kAllreduce,        // a measured all-reduce (published bundles only)
};
inline constexpr BundleFile kBundleFiles[] = {BundleFile::kDense,     BundleFile::kPerSequence,
                                              BundleFile::kAttention, BundleFile::kLinearAttention,
                                              BundleFile::kMoe,       BundleFile::kAllreduce};

// The columns, as CSV headers spell them.
namespace column {
inline constexpr std::string_view kLayer = "layer";  // the kernel's name
inline constexpr std::string_view kTokens = "tokens";
inline constexpr std::string_view kSequences = "sequences";
inline constexpr std::string_view kPrefillChunk = "prefill_chunk";
// The prefill's key coordinate: fleetsim writes the legacy kv_prefill (prefill_key minus
// half the chunk); a table may have prefill_key instead (ENGINE_SEMANTICS.md section 9).
inline constexpr std::string_view kKvPrefill = "kv_prefill";
inline constexpr std::string_view kPrefillKey = "prefill_key";
inline constexpr std::string_view kNDecode = "n_decode";
inline constexpr std::string_view kKvDecode = "kv_decode";  // the decodes' cached history
// Optional in attention.csv: rows with decode_q_len > 1 (speculative decode) are skipped.
inline constexpr std::string_view kDecodeQLen = "decode_q_len";
inline constexpr std::string_view kPrefillTokens = "prefill_tokens";
inline constexpr std::string_view kActivatedExperts = "activated_experts";
// Optional in moe.csv: only rows with ep = 1 are read.
inline constexpr std::string_view kEp = "ep";
inline constexpr std::string_view kBytes = "bytes";
inline constexpr std::string_view kTimeUs = "time_us";  // microseconds, not negative
}  // namespace column

// "dense.csv" and so on.
std::string_view FileName(BundleFile file);
// The columns fleetsim writes and the loader requires, in order (attention.csv: with
// kv_prefill, which the loader also accepts as prefill_key).
std::span<const std::string_view> ColumnsOf(BundleFile file);
// The columns joined by commas, and a newline: the file's first line.
std::string HeaderLine(BundleFile file);
// "tp4": the folder of one TP degree's tables; and back (nullopt for another name).
std::string TpFolder(int tp);
std::optional<int> TpOfFolder(std::string_view name);

// meta.yaml and its keys (what the loader reads and the builders write).
inline constexpr std::string_view kMetaFile = "meta.yaml";
namespace meta_key {
inline constexpr const char* kModel = "model";
inline constexpr const char* kHardware = "hardware";
inline constexpr const char* kSource = "source";  // {kind: ..., ...} or a bare kind
inline constexpr const char* kKind = "kind";      // measured | kernel-db | analytic
inline constexpr const char* kCardRates = "card_rates";
inline constexpr const char* kGdnLayout = "gdn_layout";
inline constexpr const char* kTpDegrees = "tp_degrees";
inline constexpr const char* kEngineEffective = "engine_effective";  // published bundles
inline constexpr const char* kEnforceEager = "enforce_eager";
inline constexpr const char* kEngineResolved = "engine_resolved";  // fleetsim bundles
inline constexpr const char* kPerTp = "per_tp";
inline constexpr const char* kBlockSize = "block_size";
inline constexpr const char* kAttnPageBytesPerToken = "attn_page_bytes_per_token";
inline constexpr const char* kMambaPageBytes = "mamba_page_bytes";
inline constexpr const char* kMambaPagePaddedBytes = "mamba_page_padded_bytes";
inline constexpr const char* kMaxNumBatchedTokens = "max_num_batched_tokens";
inline constexpr const char* kKvCacheBytes = "kv_cache_bytes";
inline constexpr const char* kKernelOrigin = "kernel_origin";  // kernel-db: per TP, per kernel
}  // namespace meta_key

// The format section of docs/BUNDLES.md, from this header and perf/layer_kernels.h.
std::string BundleFormatMarkdown();

}  // namespace fleetsim
