// Paged-attention decode kernels priced by their launch grid, one model per grid kind of the
// hardware catalog's decode kernels (model/attention_backend.h, DecodeGrid):
//
//   programs   = sequences x KV heads per rank x splits (1 without a split)
//   per program: its share of the context's K and V, streamed at the kernel's per-program
//                rate (the catalog's program_rate_bytes_per_s; absent, the compute unit's
//                share of the streaming bandwidth), and its flops at the unit's share of
//                the attention rate
//   time       = max(waves x per-program time, all bytes at the streaming bandwidth,
//                    all flops at the attention rate) + launch [+ reduce kernel]
//
// so when programs are few, occupancy -- not bytes -- sets the cost: one sequence with two
// KV heads on a Triton 2D kernel keeps two of 84 compute units busy. Kernels with a split
// (FlashAttention's, ROCm's partitions, vLLM PR 45916's split-KV) spread one sequence over
// many programs and add a reduce across the splits.
//
// The FlashAttention grid (kFlashSplit) is the calibrated model of docs/BUNDLES.md as it
// was: its per-program rate is the SM's share of the bandwidth and its waves are fractional
// (FA3/FlashInfer schedule splits to fill the SMs), so H100/H200 bundles are unchanged.
//
// Decode skew (contexts of unequal length, perf/skew_fit.h): a grid's waves run its typical
// programs, and the longest sequence's program lasts as long as its own share of the
// context; a split sized by the longest context (FlashAttention's, PR 45916's) splits every
// sequence alike. ROCm's fixed 256-token partitions cap every program's work, so there skew
// only adds partitions to the longest sequence.
//
// Every kernel here serves one query token per sequence. A decode with more (speculative
// tokens) is not a decode to these kernels: ROCm's dispatch sends it to the prefix-prefill
// kernel, FA2 loses its head packing, PR 45916's split path is never taken. Callers price
// such queries as prefill calls (KernelRoofline::AttentionDecodeUs does).
#pragma once

#include <string>

#include "model/attention_backend.h"

namespace fleetsim {

// What the decode models need of one GPU and the calibrated constants.
struct DecodeKernelContext {
  double peak_flops = 0;            // 16-bit tensor peak
  double bandwidth = 0;             // bytes/s, nominal
  double memory_efficiency = 0;     // fraction streamed
  double attention_efficiency = 0;  // fraction of peak in flash tiles
  double compute_units = 0;
  double kv_bytes = 2;               // per K or V element
  double attention_launch_s = 0;     // one FlashAttention call (calibrated)
  double attention_tile_s = 0;       // one FlashAttention tile (calibrated)
  double small_kernel_launch_s = 0;  // one small Triton/HIP kernel (calibrated, GDN update)
  double kv_split_tokens = 0;        // FlashAttention's split granularity (calibrated)
};

// `batch` sequences decoding one token each over `kv` tokens of context (history and the
// new token) on average, on one rank; the longest over `kv_longest` (decode skew; 0 or at
// most `kv`: every sequence at `kv`).
struct DecodeShape {
  double batch = 0;
  double kv = 0;
  double q_heads = 0;
  double kv_heads = 0;
  double head_dim = 0;
  double kv_longest = 0;
};

// The launch grid and what bounds it, for `inspect` and the cost.
struct DecodeGridReport {
  double programs = 0;
  double splits = 1;
  double waves = 0;              // of programs over the compute units
  double bytes_per_program = 0;  // K and V one program streams
  double program_rate = 0;       // bytes/s per program
  double main_us = 0;            // the attention kernel
  double reduce_us = 0;          // the split reduce, 0 without one
  std::string bound;             // "per-program rate (occupancy)", "bandwidth", "compute"
  double Us() const { return main_us + reduce_us; }
};

DecodeGridReport DecodeKernelGrid(const AttentionPlan& plan, const DecodeKernelContext& c,
                                  const DecodeShape& s);

// vLLM PR 45916 _get_num_splits for one step: the split count of
// kernel_paged_attention_2d_splitkv (1: the step runs the unsplit 2D kernel).
int TritonSplitKvSplits(int batch, int kv_heads, int head_size, int physical_block_size,
                        int64_t max_seq_len, int reported_processors, int max_splits);

}  // namespace fleetsim
