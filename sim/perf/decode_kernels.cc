#include "perf/decode_kernels.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace fleetsim {
namespace {

int64_t CeilDiv(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

int BitLength(int64_t x) {
  int bits = 0;
  while (x > 0) {
    ++bits;
    x >>= 1;
  }
  return bits;
}

double NextPowerOfTwo(double x) {
  double p = 1;
  while (p < x)
    p *= 2;
  return p;
}

// PR 45916 _choose_compute_block_size: the tile inside a physical KV block.
int ComputeBlockSize(int physical_block_size) {
  for (int block : {32, 16, 8, 4, 2}) {
    if (physical_block_size % block == 0) return std::min(block, 32);
  }
  return 1;
}

// PR 45916 _num_splits_heuristic: the smallest split count near peak wave efficiency,
// against a target of two workgroups per reported processor.
int SplitHeuristic(int batch_heads, int num_sms, int64_t n_blocks, int max_splits) {
  const double target = 2.0 * num_sms;
  if (batch_heads >= 0.8 * target) return 1;
  max_splits = static_cast<int>(std::min<int64_t>({max_splits, num_sms, n_blocks}));
  if (max_splits <= 1) return 1;
  const auto eligible = [&](int splits) {
    return splits == 1 || CeilDiv(n_blocks, splits) != CeilDiv(n_blocks, splits - 1);
  };
  std::vector<double> efficiency;
  double best = 0;
  for (int splits = 1; splits <= max_splits; ++splits) {
    if (!eligible(splits)) {
      efficiency.push_back(0);
      continue;
    }
    const double waves = batch_heads * splits / target;
    efficiency.push_back(waves / std::ceil(waves));
    best = std::max(best, efficiency.back());
  }
  for (int splits = 1; splits <= max_splits; ++splits) {
    if (eligible(splits) && efficiency[static_cast<std::size_t>(splits - 1)] >= 0.85 * best)
      return splits;
  }
  return 1;
}

// What one program of a grid streams and computes.
struct ProgramWork {
  double bytes = 0;
  double flops = 0;
};

// A grid of `programs` programs: each streams its bytes at `rate` and computes its flops at
// one unit's share of the attention rate; they run in waves over the units (whole waves, or
// fractional where the kernel's scheduler packs them), the last wave lasting as long as the
// longest program (decode skew; `longest` is `typical` when every context is alike), and
// the whole call can go no faster than streaming all its bytes or computing all its flops.
// `typical` is the program that fills the waves; `kv_bytes` all programs' K and V together.
void PriceGrid(DecodeGridReport& r, const DecodeKernelContext& c, ProgramWork typical,
               ProgramWork longest, double kv_bytes, double other_bytes, bool whole_waves,
               double launch_s) {
  r.bytes_per_program = longest.bytes;
  r.waves = whole_waves ? std::ceil(r.programs / c.compute_units)
                        : std::max(1.0, r.programs / c.compute_units);
  const double unit_flops = c.peak_flops * c.attention_efficiency / c.compute_units;
  const auto program_s = [&](const ProgramWork& w) {
    return std::max(w.bytes / r.program_rate, w.flops / unit_flops);
  };
  const double occupancy_s = std::max(r.waves * program_s(typical),
                                      (r.waves - 1) * program_s(typical) + program_s(longest));
  const double bandwidth_s = (kv_bytes + other_bytes) / (c.bandwidth * c.memory_efficiency);
  const double compute_s =
      kv_bytes / typical.bytes * typical.flops / (c.peak_flops * c.attention_efficiency);
  const double s = std::max({occupancy_s, bandwidth_s, compute_s});
  r.bound = s == occupancy_s
                ? "per-program rate over " + std::to_string(static_cast<int>(std::ceil(r.waves))) +
                      " wave(s) (occupancy)"
            : s == bandwidth_s ? "bandwidth"
                               : "compute";
  r.main_us = (s + launch_s) * 1e6;
}

// A reduce kernel over the splits: reads every split's partial output and log-sum-exp.
double ReduceUs(const DecodeKernelContext& c, double bytes) {
  return (bytes / (c.bandwidth * c.memory_efficiency) + c.small_kernel_launch_s) * 1e6;
}

// FlashAttention 2/3, FlashInfer and Triton unified attention, as calibrated (see the
// header): splits of kv_split_tokens of the longest context when sequences x KV heads leave
// SMs idle.
DecodeGridReport FlashSplit(const AttentionPlan& plan, const DecodeKernelContext& c,
                            const DecodeShape& s) {
  DecodeGridReport r;
  const double longest = std::max(s.kv, s.kv_longest);
  const double bytes = s.batch * s.kv * s.kv_heads * 2 * s.head_dim * c.kv_bytes;
  const double flops = s.batch * 4 * s.kv * s.q_heads * s.head_dim;
  if (!plan.decode.split_grouped_heads_only || s.q_heads > s.kv_heads) {
    const double max_splits = std::max(1.0, std::ceil(longest / c.kv_split_tokens));
    r.splits =
        std::min(max_splits, std::max(1.0, std::ceil(c.compute_units / (s.batch * s.kv_heads))));
  }
  r.programs = s.batch * s.kv_heads * r.splits;
  r.program_rate = c.bandwidth * c.memory_efficiency / c.compute_units;
  r.bytes_per_program = longest * 2 * s.head_dim * c.kv_bytes / r.splits;
  r.waves = std::max(1.0, r.programs / c.compute_units);
  // Work items (sequence x KV head x split) of longest / splits keys at most fill the
  // compute units: the makespan is the longest item's (one SM's share of the rate) or all
  // the work at the full rate. Uniform contexts: items / compute units, capped at one.
  const double occupancy =
      longest > s.kv
          ? std::min(1.0, s.batch * s.kv_heads * s.kv / (c.compute_units * longest / r.splits))
          : std::min(1.0, r.programs / c.compute_units);
  const double compute = flops / (c.peak_flops * c.attention_efficiency);
  const double memory = bytes / (c.bandwidth * c.memory_efficiency);
  const double tiles =
      s.batch * s.kv_heads * std::ceil(s.q_heads / s.kv_heads / plan.backend.query_tile_rows);
  r.bound = occupancy < 1 ? "the SMs' share of the bandwidth (occupancy)"
                          : (compute > memory ? "compute" : "bandwidth");
  r.main_us = (std::max(compute, memory) / occupancy + c.attention_launch_s +
               tiles / c.compute_units * c.attention_tile_s) *
              1e6;
  return r;
}

}  // namespace

int TritonSplitKvSplits(int batch, int kv_heads, int head_size, int physical_block_size,
                        int64_t max_seq_len, int reported_processors, int max_splits) {
  const int block = ComputeBlockSize(physical_block_size);
  if (head_size <= 64 && max_seq_len < 4096) return 1;
  if (max_seq_len <= block) return 1;
  const int64_t n_blocks = CeilDiv(max_seq_len, block);
  if (n_blocks < 2LL * reported_processors) return 1;
  const int capped =
      static_cast<int>(std::min<int64_t>({max_splits, reported_processors, n_blocks}));
  const int splits = SplitHeuristic(batch * kv_heads, reported_processors, n_blocks, capped);
  // Rounded up to a power of two: a small, capture-warmable set of reduce specializations.
  return std::min(max_splits, 1 << BitLength(splits - 1));
}

DecodeGridReport DecodeKernelGrid(const AttentionPlan& plan, const DecodeKernelContext& c,
                                  const DecodeShape& s) {
  const DecodeKernelSpec& kernel = plan.decode;
  if (kernel.grid == DecodeGrid::kFlashSplit) return FlashSplit(plan, c, s);

  DecodeGridReport r;
  const bool measured_rate = kernel.program_rate_bytes_per_s.has_value();
  r.program_rate = measured_rate ? *kernel.program_rate_bytes_per_s
                                 : c.bandwidth * c.memory_efficiency / c.compute_units;
  const double token_bytes = 2 * s.head_dim * c.kv_bytes;  // K and V of one head
  const double group = s.q_heads / s.kv_heads;
  // The Triton kernels hold a KV group's query heads in max(16, next power of two) rows
  // (num_queries_per_kv_padded) and multiply them all.
  const double padded_rows = std::max(16.0, NextPowerOfTwo(group));
  const double out_bytes = s.batch * s.q_heads * 2 * s.head_dim * c.kv_bytes;  // Q in, O out
  const double kv_bytes = s.batch * s.kv_heads * s.kv * token_bytes;
  const double longest = std::max(s.kv, s.kv_longest);
  const auto work = [&](double tokens, double rows) {
    return ProgramWork{tokens * token_bytes, 4 * tokens * rows * s.head_dim};
  };
  switch (kernel.grid) {
    case DecodeGrid::kPartitioned: {
      const double partition = kernel.partition_tokens;
      // The grid has the longest sequence's partitions; a shorter sequence's programs past
      // its own context exit at once, so those with work are about ceil(kv / partition) per
      // sequence.
      r.splits = std::ceil(longest / partition);
      r.programs = s.batch * s.kv_heads * std::ceil(s.kv / partition);
      // Every partition but the last walks `partition` tokens; the longest sets the wave.
      // Each partition writes its partial output (query heads x head_dim) and two floats.
      const double partials = s.batch * s.q_heads * r.splits * (s.head_dim * c.kv_bytes + 8);
      PriceGrid(r, c, work(std::min(s.kv, partition), group),
                work(std::min(longest, partition), group), kv_bytes, out_bytes + partials,
                measured_rate, c.small_kernel_launch_s);
      if (r.splits > 1) r.reduce_us = ReduceUs(c, 2 * partials);
      break;
    }
    case DecodeGrid::kSplitKvHeuristic:
      // _get_num_splits sizes the split by the step's max_seq_len.
      r.splits = TritonSplitKvSplits(static_cast<int>(s.batch), static_cast<int>(s.kv_heads),
                                     static_cast<int>(s.head_dim), plan.kernel_block_size,
                                     static_cast<int64_t>(std::ceil(longest)),
                                     plan.reported_processors, kernel.max_splits);
      if (r.splits > 1) {
        r.programs = s.batch * s.kv_heads * r.splits;
        const double block = ComputeBlockSize(plan.kernel_block_size);
        const double split_len = std::ceil(std::ceil(longest / r.splits) / block) * block;
        // Partial outputs and log-sum-exps in fp32 (mid_out, mid_lse).
        const double partials = s.batch * s.q_heads * r.splits * (s.head_dim + 1) * 4;
        PriceGrid(r, c, work(std::min(s.kv, split_len), padded_rows),
                  work(std::min(longest, split_len), padded_rows), kv_bytes, partials,
                  measured_rate, c.small_kernel_launch_s);
        r.reduce_us = ReduceUs(c, partials + out_bytes);
        break;
      }
      [[fallthrough]];  // one split: the step runs kernel_paged_attention_2d
    case DecodeGrid::kPerSequenceHead:
      r.splits = 1;
      r.programs = s.batch * s.kv_heads;
      PriceGrid(r, c, work(s.kv, padded_rows), work(longest, padded_rows), kv_bytes, out_bytes,
                measured_rate, c.small_kernel_launch_s);
      break;
    case DecodeGrid::kFlashSplit:
      break;
  }
  return r;
}

}  // namespace fleetsim
