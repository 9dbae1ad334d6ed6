#include "perf/kernel_db/measured_kernels.h"

#include <cmath>
#include <stdexcept>
#include <string_view>

#include "core/csv_reader.h"
#include "core/input_error.h"
#include "perf/kernel_db/aiconfigurator_csv.h"

namespace fleetsim {
namespace {

// The shapes a serving step uses, as the calibration issue bounds them: a step's GEMMs
// have at most 16384 rows (scheduled tokens) and operands at most 32768 wide; a batch of
// prefills holds at most 32768 tokens, prompts at most 16384 each; decodes run at most
// 1024 sequences over at most 128k tokens of context. Sliding-window rows are dropped:
// the engine refuses sliding-window models (docs/DESIGN.md).
constexpr int64_t kMaxGemmM = 16384;
constexpr int64_t kMaxGemmNK = 32768;
constexpr int64_t kMaxPrefillPrompt = 16384;
constexpr int64_t kMaxPrefillTokens = 32768;
constexpr int64_t kMaxDecodeHistory = 131072;
constexpr int64_t kMaxDecodeBatch = 1024;
constexpr int64_t kMaxMoeTokens = 16384;
// GDN: the prefill bounds above, and decode's batch bound.
constexpr int64_t kMaxGdnSeqLen = kMaxPrefillPrompt;
constexpr int64_t kMaxGdnTokens = kMaxPrefillTokens;
constexpr int64_t kMaxGdnBatch = kMaxDecodeBatch;

// Shared by context and generation tables: bf16 KV, full attention, one beam.
// Full attention over a bf16 KV cache, no beams. The A100 tables (an older collector) have
// no window_size column: every row there is full attention.
bool IsServingAttention(const CsvReader& csv) {
  const bool full = !csv.HasColumn("window_size") || csv.Int("window_size") == 0;
  return csv.Text("kv_cache_dtype") == "bfloat16" && full && csv.Int("beam_width") == 1;
}

void RequireAttentionColumns(const CsvReader& csv) {
  csv.RequireColumns({"batch_size", "isl", "num_heads", "num_key_value_heads", "head_dim",
                      "beam_width", "kv_cache_dtype", "step", "latency"});
}

AttentionKernelShape ReadAttentionShape(const CsvReader& csv) {
  AttentionKernelShape a;
  a.batch = PositiveCount(csv, "batch_size");
  a.q_heads = PositiveCount(csv, "num_heads");
  a.kv_heads = PositiveCount(csv, "num_key_value_heads");
  a.head_dim = PositiveCount(csv, "head_dim");
  return a;
}

// The class of a gdn_perf.csv row from its kernel_source and phase (../shared/data/
// README.md, section 2.4); an unknown source is an error rather than a silent skip, so a
// new kernel in a later table is noticed.
KernelClass GdnClassOf(const CsvReader& csv) {
  const std::string source(csv.Text("kernel_source"));
  const std::string phase(csv.Text("phase"));
  if (phase == "context" && source == "causal_conv1d_fn") return KernelClass::kGdnConvPrefill;
  if (phase == "context" && source == "chunk_gated_delta_rule_flashinfer")
    return KernelClass::kGdnPrefill;
  if (phase == "generation" && source == "causal_conv1d_update") return KernelClass::kGdnConvDecode;
  if (phase == "generation" && source == "fused_recurrent_gated_delta_rule_packed_decode")
    return KernelClass::kGdnDecode;
  csv.Fail("kernel_source", "unknown GDN kernel '" + source + "' in phase '" + phase + "'");
}

}  // namespace

bool IsGdn(KernelClass cls) {
  return cls == KernelClass::kGdnConvPrefill || cls == KernelClass::kGdnPrefill ||
         cls == KernelClass::kGdnConvDecode || cls == KernelClass::kGdnDecode;
}

std::string_view NameOf(KernelClass cls) {
  switch (cls) {
    case KernelClass::kGemm:
      return "gemm";
    case KernelClass::kPrefillAttention:
      return "prefill_attention";
    case KernelClass::kDecodeAttention:
      return "decode_attention";
    case KernelClass::kMoe:
      return "moe";
    case KernelClass::kGdnConvPrefill:
    case KernelClass::kGdnPrefill:
    case KernelClass::kGdnConvDecode:
    case KernelClass::kGdnDecode:
      return NameOf(BundleKernelOf(cls));
  }
  return "?";
}

Kernel BundleKernelOf(KernelClass cls) {
  switch (cls) {
    case KernelClass::kGdnConvPrefill:
      return Kernel::kGdnConvPrefill;
    case KernelClass::kGdnPrefill:
      return Kernel::kGdnPrefill;
    case KernelClass::kGdnConvDecode:
      return Kernel::kGdnConvDecode;
    case KernelClass::kGdnDecode:
      return Kernel::kGdnDecode;
    case KernelClass::kGemm:
    case KernelClass::kPrefillAttention:
    case KernelClass::kDecodeAttention:
    case KernelClass::kMoe:
      break;
  }
  throw std::logic_error("BundleKernelOf: not a GDN class: " + std::string(NameOf(cls)));
}

std::string Describe(const MeasuredKernel& k) {
  const auto s = [](int64_t v) { return std::to_string(v); };
  const AttentionKernelShape& a = k.attention;
  switch (k.cls) {
    case KernelClass::kGemm:
      return "gemm m=" + s(k.gemm.m) + " n=" + s(k.gemm.n) + " k=" + s(k.gemm.k);
    case KernelClass::kPrefillAttention:
    case KernelClass::kDecodeAttention:
      return std::string(NameOf(k.cls)) + " batch=" + s(a.batch) + " query=" + s(a.query_tokens) +
             " history=" + s(a.history) + " heads=" + s(a.q_heads) + "/" + s(a.kv_heads) +
             " head_dim=" + s(a.head_dim);
    case KernelClass::kMoe:
      return "moe tokens=" + s(k.moe.tokens) + " hidden=" + s(k.moe.hidden) +
             " inter=" + s(k.moe.inter) + " top_k=" + s(k.moe.top_k) +
             " experts=" + s(k.moe.experts) + " tp=" + s(k.moe.tp) + " ep=" + s(k.moe.ep);
    case KernelClass::kGdnConvPrefill:
    case KernelClass::kGdnPrefill:
    case KernelClass::kGdnConvDecode:
    case KernelClass::kGdnDecode:
      return std::string(NameOf(k.cls)) + " batch=" + s(k.gdn.batch) +
             " seq_len=" + s(k.gdn.seq_len) + " heads=" + s(k.gdn.k_heads) + "/" +
             s(k.gdn.v_heads) + " dims=" + s(k.gdn.head_k_dim) + "/" + s(k.gdn.head_v_dim) +
             " conv=" + s(k.gdn.conv_kernel);
  }
  return "?";
}

const std::filesystem::path& MeasuredKernelFiles::Of(KernelClass cls) const {
  switch (cls) {
    case KernelClass::kGemm:
      return gemm;
    case KernelClass::kPrefillAttention:
      return context_attention;
    case KernelClass::kDecodeAttention:
      return generation_attention;
    case KernelClass::kMoe:
      return moe;
    case KernelClass::kGdnConvPrefill:
    case KernelClass::kGdnPrefill:
    case KernelClass::kGdnConvDecode:
    case KernelClass::kGdnDecode:
      return gdn;
  }
  return gemm;
}

MeasuredKernelFiles KernelFilesOf(const std::filesystem::path& dir, const std::string& system) {
  MeasuredKernelFiles f;
  f.system = system;
  if (system == "h100_sxm") {
    f.gemm = dir / "h100_sxm/vllm_0.19.0/gemm/gemm_perf_bf16.csv";
    f.context_attention = dir / "h100_sxm/vllm_0.19.0/attention/context_attention_perf_kvbf16.csv";
    f.generation_attention =
        dir / "h100_sxm/vllm_0.19.0/attention/generation_attention_perf_kvbf16.csv";
    return f;
  }
  if (system == "h200_sxm") {
    // H200 attention from vLLM 0.18.0: the 0.19.0 context table is physically implausible
    // (faster than the bf16 peak; ../shared/data/README.md, section 2.4).
    f.gemm = dir / "h200_sxm/vllm_0.19.0/gemm/gemm_perf_bf16.csv";
    f.context_attention = dir / "h200_sxm/vllm_0.18.0/attention/context_attention_perf_kvbf16.csv";
    f.generation_attention =
        dir / "h200_sxm/vllm_0.18.0/attention/generation_attention_perf_kvbf16.csv";
    f.moe = dir / "h200_sxm/vllm_0.19.0/moe/moe_perf_bf16.csv";
    // GDN from vLLM 0.24.0, the only version with the full Qwen3.5 grid.
    f.gdn = dir / "h200_sxm/vllm_0.24.0/linear_attention/gdn_perf.csv";
    return f;
  }
  if (system == "a100_sxm") {
    // Not used to fit anything: an out-of-sample GPU for `bundle compare-kernels`.
    f.gemm = dir / "a100_sxm/vllm_0.14.0/gemm/gemm_perf.csv";
    f.context_attention = dir / "a100_sxm/vllm_0.14.0/attention/context_attention_perf.csv";
    f.generation_attention = dir / "a100_sxm/vllm_0.14.0/attention/generation_attention_perf.csv";
    f.moe = dir / "a100_sxm/vllm_0.14.0/moe/moe_perf.csv";
    return f;
  }
  throw InputError(dir.string(), 0, "system",
                   "unknown system '" + system + "' (known: a100_sxm, h100_sxm, h200_sxm)");
}

int64_t MeasuredTables::CountOf(KernelClass cls) const {
  int64_t n = 0;
  for (const MeasuredKernel& k : rows)
    n += k.cls == cls ? 1 : 0;
  return n;
}

MeasuredTables LoadMeasuredKernels(const std::filesystem::path& dir, const std::string& system) {
  MeasuredTables t;
  t.files = KernelFilesOf(dir, system);
  ReadGemmTable(t.files.gemm, t.rows);
  ReadContextAttentionTable(t.files.context_attention, t.rows);
  ReadGenerationAttentionTable(t.files.generation_attention, t.rows);
  if (!t.files.moe.empty()) ReadMoeTable(t.files.moe, t.rows);
  if (!t.files.gdn.empty()) ReadGdnTable(t.files.gdn, t.rows);
  return t;
}

void ReadGemmTable(const std::filesystem::path& path, std::vector<MeasuredKernel>& out) {
  CsvReader csv(path.string());
  csv.RequireColumns({"gemm_dtype", "m", "n", "k", "latency"});
  while (csv.Next()) {
    if (csv.Text("gemm_dtype") != "bfloat16") continue;
    MeasuredKernel k;
    k.cls = KernelClass::kGemm;
    k.gemm = {PositiveCount(csv, "m"), PositiveCount(csv, "n"), PositiveCount(csv, "k")};
    if (k.gemm.m > kMaxGemmM || k.gemm.n > kMaxGemmNK || k.gemm.k > kMaxGemmNK) continue;
    k.measured_us = AiconfiguratorLatencyUs(csv);
    k.line = csv.line();
    out.push_back(k);
  }
}

void ReadContextAttentionTable(const std::filesystem::path& path,
                               std::vector<MeasuredKernel>& out) {
  CsvReader csv(path.string());
  RequireAttentionColumns(csv);
  while (csv.Next()) {
    if (!IsServingAttention(csv)) continue;
    MeasuredKernel k;
    k.cls = KernelClass::kPrefillAttention;
    k.attention = ReadAttentionShape(csv);
    // Context rows prefill whole prompts: `isl` tokens each, no cached prefix (step 0).
    k.attention.query_tokens = PositiveCount(csv, "isl");
    k.attention.history = csv.Int("step");
    const AttentionKernelShape& a = k.attention;
    if (a.query_tokens > kMaxPrefillPrompt || a.batch * a.query_tokens > kMaxPrefillTokens ||
        (a.head_dim != 64 && a.head_dim != 128)) {
      continue;
    }
    k.measured_us = AiconfiguratorLatencyUs(csv);
    k.line = csv.line();
    out.push_back(k);
  }
}

void ReadGenerationAttentionTable(const std::filesystem::path& path,
                                  std::vector<MeasuredKernel>& out) {
  CsvReader csv(path.string());
  RequireAttentionColumns(csv);
  while (csv.Next()) {
    if (!IsServingAttention(csv)) continue;
    MeasuredKernel k;
    k.cls = KernelClass::kDecodeAttention;
    k.attention = ReadAttentionShape(csv);
    // Generation rows decode one token (isl 1) after `step` cached tokens.
    k.attention.query_tokens = 1;
    k.attention.history = PositiveCount(csv, "step");
    if (k.attention.history > kMaxDecodeHistory || k.attention.batch > kMaxDecodeBatch) continue;
    k.measured_us = AiconfiguratorLatencyUs(csv);
    k.line = csv.line();
    out.push_back(k);
  }
}

void ReadMoeTable(const std::filesystem::path& path, std::vector<MeasuredKernel>& out) {
  CsvReader csv(path.string());
  csv.RequireColumns({"moe_dtype", "num_tokens", "hidden_size", "inter_size", "topk", "num_experts",
                      "moe_tp_size", "moe_ep_size", "distribution", "latency"});
  while (csv.Next()) {
    // Balanced routing only: the analytic MoE gives every expert reached the same rows.
    if (csv.Text("moe_dtype") != "bfloat16" || csv.Text("distribution") != "balanced") continue;
    MeasuredKernel k;
    k.cls = KernelClass::kMoe;
    k.moe = {PositiveCount(csv, "num_tokens"),  PositiveCount(csv, "hidden_size"),
             PositiveCount(csv, "inter_size"),  PositiveCount(csv, "topk"),
             PositiveCount(csv, "num_experts"), PositiveCount(csv, "moe_tp_size"),
             PositiveCount(csv, "moe_ep_size")};
    if (k.moe.tokens > kMaxMoeTokens) continue;
    k.measured_us = AiconfiguratorLatencyUs(csv);
    k.line = csv.line();
    out.push_back(k);
  }
}

void ReadGdnTable(const std::filesystem::path& path, std::vector<MeasuredKernel>& out) {
  CsvReader csv(path.string());
  csv.RequireColumns({"kernel_source", "phase", "batch_size", "seq_len", "num_tokens", "d_conv",
                      "num_k_heads", "head_k_dim", "num_v_heads", "head_v_dim", "latency"});
  while (csv.Next()) {
    MeasuredKernel k;
    k.cls = GdnClassOf(csv);
    GdnKernelShape& g = k.gdn;
    g.batch = PositiveCount(csv, "batch_size");
    g.seq_len = PositiveCount(csv, "seq_len");
    g.k_heads = PositiveCount(csv, "num_k_heads");
    g.head_k_dim = PositiveCount(csv, "head_k_dim");
    g.v_heads = PositiveCount(csv, "num_v_heads");
    g.head_v_dim = PositiveCount(csv, "head_v_dim");
    g.conv_kernel = PositiveCount(csv, "d_conv");
    if (PositiveCount(csv, "num_tokens") != g.batch * g.seq_len)
      csv.Fail("num_tokens", "must be batch_size x seq_len");
    if (g.seq_len > kMaxGdnSeqLen || g.batch * g.seq_len > kMaxGdnTokens || g.batch > kMaxGdnBatch)
      continue;
    k.measured_us = AiconfiguratorLatencyUs(csv);
    k.line = csv.line();
    out.push_back(k);
  }
}

}  // namespace fleetsim
