// What an empty FlashAttention 2 tile costs, read off a measured attention table.
//
// FlashAttention 2 (vLLM's FLASH_ATTN backend outside SM 9.x/10.x) launches one thread
// block per (query block, sequence, query head) and sizes the query blocks by the batch's
// LONGEST query: grid (ceil(max_seqlen_q / kBlockM), sequences, heads), kBlockM = 64
// (csrc/flash_attn/src/flash_fwd_launch_template.h, run_flash_splitkv_fwd). A block past
// its own sequence's queries returns at once (flash_fwd_kernel.h: `if (m_block * kBlockM
// >= binfo.actual_seqlen_q) return;`). In a mixed step every decode therefore launches
// ceil(chunk / 64) - 1 empty blocks per query head: 61,440 of them for 128 decodes beside
// a 1,024-token chunk of Llama-3.1-8B. Each still takes an SM's block slot.
//
// The fit differences the table's own cells, so that no other part of the model enters:
// for a chunk c > 64 with n decodes over kv_decode keys,
//   y = [t(c, n) - t(c, 0)] - [t(64, n) - t(64, 0)]
// is what the n decodes cost beside c beyond what they cost beside one query block, and
//   x = (ceil(c / 64) - 1) x n x query heads / SMs
// is the empty blocks each SM runs. The slope of y on x through the origin (least squares)
// is one empty block's time on one SM. Only decodes of at most one 64-key block enter:
// longer ones bring their own tiles' work, which grows with the chunk for other reasons
// (the wave the chunk's tiles leave them).
//
//   EmptyTileFit f = FitEmptyTileSeconds("RTXPRO6000/.../tp1/attention.csv",
//                                        {.q_heads = 64, .compute_units = 188});
//   f.seconds;  // ~0.35e-6 on that table
#pragma once

#include <string>

namespace fleetsim {

struct EmptyTileGeometry {
  double q_heads = 0;           // query heads per rank
  double compute_units = 0;     // SMs
  double query_tile_rows = 64;  // FA2's kBlockM
  double key_block = 64;        // decodes of at most this many keys enter the fit
};

struct EmptyTileFit {
  double seconds = 0;  // one empty tile on one SM
  int cells = 0;       // mixed cells the fit used
  // Least-squares quality over those cells: the mean of y and the root-mean-square of the
  // residual y - x x seconds, in microseconds.
  double mean_excess_us = 0;
  double rms_residual_us = 0;
};

// Reads `attention_csv` (prefill_chunk, kv_prefill, n_decode, kv_decode, time_us: an
// LLMServingSim or fleetsim bundle's attention table). A file without the columns, or
// without a cell to difference (no 64-token chunk, no decode of at most key_block keys),
// is an InputError naming it.
EmptyTileFit FitEmptyTileSeconds(const std::string& attention_csv, const EmptyTileGeometry& g);

}  // namespace fleetsim
