// Measured kernel latencies from NVIDIA's aiconfigurator silicon database (vLLM, bf16),
// read in place from ../shared/data/profiles/aiconfigurator and reduced to the shapes a
// serving step uses, so that the analytic model (perf/analytic_kernels.h) can be compared
// with and calibrated against them. Latencies in the tables are milliseconds; here they
// are microseconds, like every kernel time in fleetsim.
//
//   MeasuredTables h200 = LoadMeasuredKernels(shared / "profiles/aiconfigurator", "h200_sxm");
//   for (const MeasuredKernel& k : h200.rows)
//     if (k.cls == KernelClass::kGemm) use(k.gemm.m, k.gemm.n, k.gemm.k, k.measured_us);
//   h200.CountOf(KernelClass::kGdnDecode);  // recurrent decode rows (H200 only)
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "perf/layer_kernels.h"

namespace fleetsim {

// The GDN classes are its four sub-kernels, named like the bundle kernels they price:
// the short convolution and the chunked delta rule of a prefill, the convolution's update
// and the recurrent delta rule of a decode.
enum class KernelClass {
  kGemm,
  kPrefillAttention,
  kDecodeAttention,
  kMoe,
  kGdnConvPrefill,
  kGdnPrefill,
  kGdnConvDecode,
  kGdnDecode,
};

inline constexpr std::array<KernelClass, 8> kKernelClasses = {
    KernelClass::kGemm,          KernelClass::kPrefillAttention, KernelClass::kDecodeAttention,
    KernelClass::kMoe,           KernelClass::kGdnConvPrefill,   KernelClass::kGdnPrefill,
    KernelClass::kGdnConvDecode, KernelClass::kGdnDecode};
inline constexpr std::array<KernelClass, 4> kGdnKernelClasses = {
    KernelClass::kGdnConvPrefill, KernelClass::kGdnPrefill, KernelClass::kGdnConvDecode,
    KernelClass::kGdnDecode};

bool IsGdn(KernelClass cls);
// The bundle kernel a GDN class prices (kGdnConvPrefill: Kernel::kGdnConvPrefill, ...);
// only for IsGdn classes.
Kernel BundleKernelOf(KernelClass cls);

// "gemm", "prefill_attention", "decode_attention", "moe", and the GDN classes by their
// bundle kernel's name: "gdn_conv_prefill", "gdn_prefill", "gdn_conv_decode", "gdn_decode".
std::string_view NameOf(KernelClass cls);

// Y[m x n] = X[m x k] W^T.
struct GemmKernelShape {
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
};

// One attention layer on one GPU: `batch` sequences of `query_tokens` new tokens each
// over `history` cached tokens (prefill: history 0, query_tokens the prompt; decode:
// query_tokens 1, history the KV length before the new token). Heads are per GPU.
struct AttentionKernelShape {
  int64_t batch = 0;
  int64_t query_tokens = 0;
  int64_t history = 0;
  int64_t q_heads = 0;
  int64_t kv_heads = 0;
  int64_t head_dim = 0;
};

// vLLM's fused MoE: `tokens` tokens into `experts` experts of FFN width `inter`, top-k
// routing, sharded `tp` ways over inter and `ep` ways over experts (this GPU's shard).
struct MoeKernelShape {
  int64_t tokens = 0;
  int64_t hidden = 0;
  int64_t inter = 0;
  int64_t top_k = 0;
  int64_t experts = 0;
  int64_t tp = 1;
  int64_t ep = 1;
};

// One GDN layer's sub-kernel on one GPU: `batch` sequences of `seq_len` tokens each (1 in
// decode), heads per GPU, a `conv_kernel`-wide short convolution.
struct GdnKernelShape {
  int64_t batch = 0;
  int64_t seq_len = 0;
  int64_t k_heads = 0;
  int64_t head_k_dim = 0;
  int64_t v_heads = 0;
  int64_t head_v_dim = 0;
  int64_t conv_kernel = 0;

  int64_t ConvDim() const { return 2 * k_heads * head_k_dim + v_heads * head_v_dim; }
};

// One measured row. Only the shape of its class is filled in.
struct MeasuredKernel {
  KernelClass cls = KernelClass::kGemm;
  GemmKernelShape gemm;
  AttentionKernelShape attention;
  MoeKernelShape moe;
  GdnKernelShape gdn;
  double measured_us = 0;
  int line = 0;  // in the class's table file
};

// "gemm m=4096 n=4096 k=4096" and the like: a row's shape for reports.
std::string Describe(const MeasuredKernel& kernel);

// The tables of one system (a folder under aiconfigurator/: h100_sxm, h200_sxm); a class
// the system has no table for is an empty path.
struct MeasuredKernelFiles {
  std::string system;
  std::filesystem::path gemm;
  std::filesystem::path context_attention;
  std::filesystem::path generation_attention;
  std::filesystem::path moe;
  std::filesystem::path gdn;  // all four GDN classes

  const std::filesystem::path& Of(KernelClass cls) const;
};

// The files fleetsim compares against for `system`; an unknown system lists the known ones
// (InputError).
MeasuredKernelFiles KernelFilesOf(const std::filesystem::path& aiconfigurator_dir,
                                  const std::string& system);

struct MeasuredTables {
  MeasuredKernelFiles files;
  std::vector<MeasuredKernel> rows;  // in file order, class by class

  int64_t CountOf(KernelClass cls) const;
};

// Reads every table of `system`, filtered to serving shapes (see measured_kernels.cc).
MeasuredTables LoadMeasuredKernels(const std::filesystem::path& aiconfigurator_dir,
                                   const std::string& system);

// The readers, one per table; each appends the rows it keeps to `out`. A malformed row is
// an InputError naming the file, line and column.
void ReadGemmTable(const std::filesystem::path& path, std::vector<MeasuredKernel>& out);
void ReadContextAttentionTable(const std::filesystem::path& path, std::vector<MeasuredKernel>& out);
void ReadGenerationAttentionTable(const std::filesystem::path& path,
                                  std::vector<MeasuredKernel>& out);
void ReadMoeTable(const std::filesystem::path& path, std::vector<MeasuredKernel>& out);
// gdn_perf.csv: one row per sub-kernel, told apart by kernel_source.
void ReadGdnTable(const std::filesystem::path& path, std::vector<MeasuredKernel>& out);

}  // namespace fleetsim
