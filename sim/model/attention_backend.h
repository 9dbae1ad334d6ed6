// The attention backends vLLM can run on one GPU, as the hardware catalog describes them
// (cluster_configs/hardware/<gpu>.yaml, `attention_backend:`), and the choice vLLM makes
// for one instance: the backend (VLLM_ATTENTION_BACKEND / --attention-backend, else the
// platform's priority list, first valid), then -- after the engine has resolved its block
// size -- the decode kernel inside it.
//
// Every rule is data with its source (vLLM's platforms/cuda.py and rocm.py, the backends'
// get_supported_kernel_block_sizes and head sizes, use_rocm_custom_paged_attention, ...);
// the code evaluates them. A pinned backend or decode kernel that cannot run is refused
// naming the failed condition.
//
//   const AttentionCatalog& catalog = hardware.attention;
//   BackendChoice b = SelectAttentionBackend(catalog, query);        // ROCM_ATTN, first valid
//   int align = b.backend->AlignmentBase();                           // 16
//   DecodeChoice d = SelectDecodeKernel(*b.backend, query, 784);      // triton 2D: head 256
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/setting.h"
#include "core/yaml_section.h"

namespace fleetsim {

// A set of sizes (block sizes, head sizes): listed values, or multiples of the one value
// (vLLM's MultipleOf), optionally bounded.
struct SizeRule {
  std::vector<int> values;
  bool multiple_of = false;
  int min = 0;  // 0: no floor
  int max = 0;  // 0: no cap
  std::string source;

  bool Admits(int size) const;
  int Smallest() const { return values.empty() ? 0 : values.front(); }
  // "16, 32", "multiples of 16", "multiples of 8 up to 256".
  std::string Text() const;
};

// When a decode kernel runs: every listed condition must hold (empty: any).
struct KernelGate {
  std::vector<int> head_sizes;
  std::vector<int> kernel_block_sizes;
  bool power_of_two_block = false;
  int min_gqa_ratio = 0;                     // 0: no bound
  int max_gqa_ratio = 0;                     // 0: no bound
  int64_t max_model_len = 0;                 // 0: no bound
  std::vector<std::string> kv_cache_dtypes;  // as the setting spells them; "auto" included
  bool no_sliding_window = false;
  std::string source;
};

// How a decode kernel's launch grid is laid out (what the analytic model prices):
enum class DecodeGrid {
  // FlashAttention 2/3, FlashInfer, Triton unified attention: a KV group's query heads in
  // one tile, the KV range split over the SMs when sequences x KV heads leave them idle.
  kFlashSplit,
  // ROCm's HIP paged attention: one program per (sequence, KV head, fixed-size partition of
  // the context), plus a reduce kernel across partitions.
  kPartitioned,
  // Triton kernel_paged_attention_2d: one program per (sequence, KV head) walking the whole
  // context.
  kPerSequenceHead,
  // vLLM PR 45916's kernel_paged_attention_2d_splitkv: the context split by its
  // _get_num_splits heuristic, plus a reduce kernel; one split falls back to the 2D kernel.
  kSplitKvHeuristic,
};
std::string_view NameOf(DecodeGrid grid);

struct DecodeKernelSpec {
  std::string name;  // e.g. flash_attn_3, rocm_paged_attention, triton_paged_attention_2d
  DecodeGrid grid = DecodeGrid::kFlashSplit;
  // false: vLLM's default build does not route decodes here (a kernel gated to another
  // architecture, or an unmerged PR); only a `decode_kernel` pin selects it.
  bool default_route = true;
  KernelGate gate;
  // kFlashSplit: splits only with more query heads than KV heads (FA2's
  // seqlenq_ngroups_swapped); an MHA decode then runs unsplit.
  bool split_grouped_heads_only = false;
  int partition_tokens = 0;  // kPartitioned
  int max_splits = 0;        // kSplitKvHeuristic
  // KV bytes one program streams per second when it runs alone on its compute unit
  // (latency-bound loops stream far below the unit's share of the DRAM bandwidth). Absent:
  // the unit's share of the streaming bandwidth, the analytic fit's implicit figure.
  std::optional<double> program_rate_bytes_per_s;
  std::string program_rate_source;
  std::string source;
};

struct BackendSpec {
  std::string name;  // vLLM's: FLASH_ATTN, FLASHINFER, TRITON_ATTN, ROCM_ATTN, ...
  SizeRule kernel_block_sizes;
  SizeRule head_sizes;
  std::vector<std::string> kv_cache_dtypes;  // accepted kv_cache_dtype settings
  std::string kv_cache_dtypes_source;
  // Prefill and mixed calls: query rows per thread-block tile, and whether a KV group's
  // query heads share a tile (FlashAttention 3's PackGQA) or each head gets its own.
  int query_tile_rows = 128;
  bool packs_gqa = true;
  std::string query_tile_source;
  std::vector<DecodeKernelSpec> decode;  // in the order vLLM's dispatch tries them

  // The hybrid block-size alignment base: the smallest supported kernel block size.
  int AlignmentBase() const { return kernel_block_sizes.Smallest(); }
  // vLLM select_common_block_size: `block` itself when the backend takes it, else the
  // largest listed size dividing it; nullopt when none does.
  std::optional<int> KernelBlockSize(int block) const;
  const DecodeKernelSpec* FindDecodeKernel(std::string_view name) const;
};

struct AttentionCatalog {
  std::string platform;  // cuda | rocm
  std::string arch;      // compute capability "9.0", or the gfx target "gfx1100"
  // What torch reports as multi_processor_count: SMs on NVIDIA, CUs on CDNA, and
  // work-group processors (two CUs each) on RDNA. Split heuristics size their grids by it.
  int reported_processors = 0;
  std::string platform_source;
  std::vector<std::string> priority;  // vLLM's backend order on this GPU
  std::string priority_source;
  std::vector<BackendSpec> backends;

  const BackendSpec* Find(std::string_view name) const;
};

// Reads the catalog's `attention_backend:` section.
AttentionCatalog ReadAttentionCatalog(const YamlSection& doc);

// What vLLM's selector and the decode dispatch look at, for one instance on one rank.
struct AttentionQuery {
  int head_size = 0;
  int q_heads_per_rank = 0;
  int kv_heads_per_rank = 0;
  std::string kv_cache_dtype = "auto";  // the setting, as given
  std::string model_dtype = "bfloat16";
  int sliding_window = 0;
  std::optional<int> requested_block_size;
  int64_t max_model_len = 0;
  std::string backend_pin;  // "" or "auto": vLLM's priority order
  std::string kernel_pin;   // "" or "auto": the backend's dispatch
};

struct BackendChoice {
  const BackendSpec* backend = nullptr;
  bool pinned = false;
  // Why: "first valid in vLLM's order on gfx1100 (ROCM_ATTN)", with the backends skipped
  // before it and their failed conditions.
  std::string why;
};

struct DecodeChoice {
  const DecodeKernelSpec* kernel = nullptr;
  int kernel_block_size = 0;
  bool pinned = false;
  std::string why;  // the failed conditions of the kernels skipped, or "pinned"
};

// One instance's attention as resolved: the backend and decode kernel it runs, and why --
// what the cost model prices and `inspect`, meta.yaml and /provenance report.
struct AttentionPlan {
  BackendSpec backend;
  DecodeKernelSpec decode;
  int kernel_block_size = 0;
  int reported_processors = 0;  // the catalog's multi_processor_count (split heuristics)
  bool backend_pinned = false;
  bool decode_pinned = false;
  std::string backend_why;
  std::string decode_why;
};

// The plan for a typical GQA model on this GPU (head size 128, 32 query and 8 KV heads,
// block 16, auto KV dtype, 32k context): the kernels the analytic model's calibration and
// the kernel-table comparisons price.
AttentionPlan DefaultAttentionPlan(const AttentionCatalog& catalog);

// The failed conditions of `backend` for the query (empty when it can run).
std::vector<std::string> BackendViolations(const BackendSpec& backend, const AttentionQuery& q);
// The failed conditions of a decode kernel at a kernel block size (empty when it runs).
std::vector<std::string> KernelViolations(const DecodeKernelSpec& kernel, const AttentionQuery& q,
                                          int kernel_block_size);

// vLLM's choice: the pin (`attention_backend`) when it can run, else the first backend in
// the platform's priority order that can. A pin that cannot run, or no backend at all, is
// `error("attention_backend", <the failed conditions>)`.
BackendChoice SelectAttentionBackend(const AttentionCatalog& catalog, const AttentionQuery& q,
                                     const SettingError& error);
// The choice points into the catalog: a temporary one would leave it dangling.
BackendChoice SelectAttentionBackend(AttentionCatalog&& catalog, const AttentionQuery& q,
                                     const SettingError& error) = delete;
// The decode kernel for the resolved block size: the pin (`decode_kernel`) when it can run
// (error("decode_kernel", ...) naming the failed condition otherwise), else the first
// default-routed kernel whose gate passes.
DecodeChoice SelectDecodeKernel(const BackendSpec& backend, const AttentionQuery& q,
                                int resolved_block_size, const SettingError& error);

}  // namespace fleetsim
