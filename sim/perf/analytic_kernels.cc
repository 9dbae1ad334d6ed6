#include "perf/analytic_kernels.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

#include "model/cache_shapes.h"

namespace fleetsim {

AnalyticConstants AnalyticConstants::Uncalibrated() {
  AnalyticConstants c;
  c.gemm_efficiency = 0.75;
  c.gemm_half_m = 24;
  c.memory_efficiency = 0.75;
  c.launch_s = 4e-6;
  c.attention_efficiency = 0.45;
  c.kv_split_tokens = 512;
  c.attention_launch_s = 4e-6;
  c.attention_tile_s = 0;
  // GDN starts from the generic memory efficiency and launch, and attention's efficiency.
  c.gdn_conv_efficiency = 0.75;
  c.gdn_chunk_efficiency = 0.45;
  c.gdn_update_launch_s = 4e-6;
  c.gdn_launch_s = 4e-6;
  return c;
}

KernelRoofline::KernelRoofline(const HardwareSpec& hardware, Dtype dtype,
                               AnalyticConstants constants)
    : KernelRoofline(hardware, dtype, DefaultAttentionPlan(hardware.attention), constants) {}

KernelRoofline::KernelRoofline(const HardwareSpec& hardware, Dtype dtype, AttentionPlan attention,
                               AnalyticConstants constants)
    : c_(constants),
      attention_(std::move(attention)),
      query_tile_rows_(attention_.backend.query_tile_rows),
      packs_gqa_(attention_.backend.packs_gqa) {
  peak_flops_ = hardware.Peak16BitFlops(dtype);
  bandwidth_ = hardware.memory_bandwidth_bytes_per_s.value;
  // memory_efficiency was fitted on HBM cards; a card whose streaming rate was measured
  // otherwise (GDDR) uses that.
  if (hardware.memory_stream_efficiency)
    c_.memory_efficiency = hardware.memory_stream_efficiency->value;
  // gemm_efficiency is the fraction of the spec sheet's peak that Hopper's large GEMMs
  // reach (0.790 fitted; the H100's published MAMF is 0.803 of it). A card with its own
  // measured matmul rate reaches that instead, and the other tensor-core kernels (flash
  // attention, the chunked delta rule) move with it: what sets a card's rate against its
  // spec sheet -- sustained clocks above or below the rated boost, power limits -- is the
  // card's, not the kernel's.
  if (hardware.matmul_achievable_flops) {
    const double measured = hardware.matmul_achievable_flops->value / peak_flops_;
    const double scale = measured / c_.gemm_efficiency;
    c_.gemm_efficiency = measured;
    c_.attention_efficiency *= scale;
    c_.gdn_chunk_efficiency *= scale;
  }
  compute_units_ = hardware.compute_units.value;
  act_bytes_ = BytesOf(dtype);
}

DecodeKernelContext KernelRoofline::DecodeContext() const {
  DecodeKernelContext d;
  d.peak_flops = peak_flops_;
  d.bandwidth = bandwidth_;
  d.memory_efficiency = c_.memory_efficiency;
  d.attention_efficiency = c_.attention_efficiency;
  d.compute_units = compute_units_;
  d.kv_bytes = act_bytes_;
  d.attention_launch_s = c_.attention_launch_s;
  d.attention_tile_s = c_.attention_tile_s;
  // vLLM's causal_conv1d_update is a single small Triton kernel; its fitted fixed cost is
  // the one sourced figure for a small Triton or HIP kernel's launch under CUDA graphs.
  d.small_kernel_launch_s = c_.gdn_update_launch_s;
  d.kv_split_tokens = static_cast<double>(c_.kv_split_tokens);
  return d;
}

double KernelRoofline::GemmUs(double m, double n, double k, const WeightFormat* weights) const {
  const double efficiency = c_.gemm_efficiency * m / (m + c_.gemm_half_m);
  if (weights == nullptr) {
    const double compute = 2 * m * n * k / (peak_flops_ * efficiency);
    const double memory =
        (m * k + n * k + m * n) * act_bytes_ / (bandwidth_ * c_.memory_efficiency);
    return (std::max(compute, memory) + c_.launch_s) * 1e6;
  }
  // Quantized: the weights stream at their stored size, and the multiply runs at the
  // format's tensor rate after a dequantization on the vector units that every m-tile of
  // the output repeats, in the same main loop. Its compute is that of at least 16 rows (the
  // smallest MMA tile: WMMA 16x16x16 on RDNA3, mma.m16n8k16 in Marlin) at the large-GEMM
  // fraction of peak, not the fitted small-m fall-off: that fit comes from 16-bit GEMMs,
  // which stream four times the bytes and so never expose their compute at small m, while
  // the 4-bit kernels stay memory-bound up to 16-32 rows (Frantar et al., MARLIN, 2024:
  // near-ideal 4x speedups up to batch sizes of 16-32).
  const double rows = std::max(m, 16.0);
  const double dequant = n * k * weights->dequant_ops_per_weight *
                         std::ceil(m / weights->dequant_tile_rows) / weights->vector_flops;
  const double compute = 2 * rows * n * k / (weights->peak_flops * c_.gemm_efficiency) + dequant;
  const double memory = ((m * k + m * n) * act_bytes_ + n * k * weights->bytes_per_weight) /
                        (bandwidth_ * c_.memory_efficiency);
  return (std::max(compute, memory) + c_.launch_s) * 1e6;
}

// Norms, rotary, activation, embedding, sampling: one memory-bound pass each. Their fixed
// cost is that of a small memory-bound kernel, not a GEMM's (launch_s, fitted on GEMMs with
// their tile setup and epilogue): the H200 table's single-token causal_conv1d_update is such
// a kernel and fits gdn_update_launch_s (~1.8 us; a bare CUDA launch with event timing is
// ~2 us). The measured RTX bundles' one-token norm and rotary rows (1.9-2.7 us; one 3.6 us) agree.
double KernelRoofline::ElementwiseUs(double bytes) const {
  return (bytes / (bandwidth_ * c_.memory_efficiency) + c_.gdn_update_launch_s) * 1e6;
}

// A tile costs attention_tile_s plus this per key it walks: the flops of all its rows
// (padding rows included: the tensor cores multiply the whole tile) at one SM's share of
// the attention rate.
double KernelRoofline::TileKeySeconds(double rows, double head_dim) const {
  return 4 * rows * head_dim / (peak_flops_ * c_.attention_efficiency / compute_units_);
}

// Each tile walks the keys up to its last query row (causal; the kernels skip key blocks
// past the diagonal): block i of a chunk reaches history + (i + 1) x its tokens, the last
// block history + chunk. Packed, a tile holds query_tile_rows / group query tokens of all
// of a KV group's heads; unpacked, query_tile_rows tokens of one query head. A tile's time
// is affine in its keys, so the blocks' sum is that of an arithmetic series.
void KernelRoofline::AddPrefillTiles(TileWork& work, double batch, double chunk, double history,
                                     double q_heads, double kv_heads, double head_dim) const {
  const double group = q_heads / kv_heads;
  const double tokens_per_tile = packs_gqa_ ? query_tile_rows_ / group : query_tile_rows_;
  const double heads = packs_gqa_ ? kv_heads : q_heads;
  const double blocks = std::ceil(chunk / tokens_per_tile);
  const double keys = blocks * history + tokens_per_tile * (blocks - 1) * blocks / 2 + chunk;
  const double per_key_s = TileKeySeconds(query_tile_rows_, head_dim);
  work.tiles += batch * heads * blocks;
  work.seconds += batch * heads * (blocks * c_.attention_tile_s + keys * per_key_s);
  work.longest_s = std::max(work.longest_s, c_.attention_tile_s + (history + chunk) * per_key_s);
  work.kv_bytes += batch * (history + chunk) * kv_heads * 2 * head_dim * act_bytes_;
  work.other_bytes += batch * 2 * chunk * q_heads * head_dim * act_bytes_;
}

// Tiles run in waves of one per SM: the makespan is the waves times the mean tile, or the
// longest tile when it outlasts them; empty tiles take their turns on the SMs on top (they
// do not shorten the mean of the real ones). Streaming K and V bounds it from below. Unpacked, a
// KV group's query heads each read the group's K and V: the grid runs one head's tiles
// (all sequences) before the next head's, so the heads of a group share what they read
// in L2 only as far as they are resident together, SMs / (tiles per head) of them.
double KernelRoofline::CallUs(const TileWork& work, double q_heads, double kv_heads) const {
  double makespan = work.longest_s;
  if (work.tiles > 0) {
    const double waves = std::ceil(work.tiles / compute_units_);
    makespan = std::max(makespan, waves * work.seconds / work.tiles);
  }
  makespan += EmptyTilesSeconds(work);
  double kv_reads = 1;
  if (!packs_gqa_ && work.tiles > 0) {
    const double group = q_heads / kv_heads;
    const double heads_together = compute_units_ / (work.tiles / q_heads);
    kv_reads = group / std::clamp(heads_together, 1.0, group);
  }
  const double bytes = work.kv_bytes * kv_reads + work.other_bytes;
  const double memory = bytes / (bandwidth_ * c_.memory_efficiency);
  return (std::max(makespan, memory) + c_.attention_launch_s) * 1e6;
}

double KernelRoofline::AttentionPrefillUs(double batch, double chunk, double history,
                                          double q_heads, double kv_heads, double head_dim) const {
  // Queries of one token each are a decode call to the kernel (FA2 packs the KV group's
  // heads only then: max_seqlen_q == 1).
  if (chunk <= 1) return AttentionDecodeUs(batch, history + chunk, q_heads, kv_heads, head_dim);
  TileWork work;
  AddPrefillTiles(work, batch, chunk, history, q_heads, kv_heads, head_dim);
  return CallUs(work, q_heads, kv_heads);
}

// A pure-decode call, priced by the decode kernel's launch grid (perf/decode_kernels.h).
// More than one query token per sequence (speculative decoding) is a prefill-style call on
// every backend: ROCm's dispatch sends it to the prefix-prefill kernel, FA2 loses its head
// packing, and PR 45916's split path is never taken.
double KernelRoofline::AttentionDecodeUs(double batch, double kv, double q_heads, double kv_heads,
                                         double head_dim, double kv_longest,
                                         double query_len) const {
  if (query_len > 1) {
    return AttentionPrefillUs(batch, query_len, std::max(0.0, kv - query_len), q_heads, kv_heads,
                              head_dim);
  }
  return DecodeLaunch(batch, kv, q_heads, kv_heads, head_dim, kv_longest).Us();
}

DecodeGridReport KernelRoofline::DecodeLaunch(double batch, double kv, double q_heads,
                                              double kv_heads, double head_dim,
                                              double kv_longest) const {
  return DecodeKernelGrid(attention_, DecodeContext(),
                          {batch, kv, q_heads, kv_heads, head_dim, kv_longest});
}

// One call for the chunk and the decodes. Unpacked (FA2), the decodes lose the pure-decode
// kernel's packing and split: each gets a padded tile per query head, in the same waves as
// the chunk's tiles. Packed backends schedule both kinds of tile in one grid: their work
// adds up, under one launch.
double KernelRoofline::AttentionMixedUs(double chunk, double history, double decodes, double kv,
                                        double q_heads, double kv_heads, double head_dim,
                                        double kv_longest) const {
  // ROCM_ATTN (chunked_prefill_paged_decode): the prefix-prefill kernel serves the prefill
  // (skip_decode), then the decode kernel the decodes -- two calls.
  if (attention_.decode.grid != DecodeGrid::kFlashSplit) {
    return AttentionPrefillUs(1, chunk, history, q_heads, kv_heads, head_dim) +
           AttentionDecodeUs(decodes, kv, q_heads, kv_heads, head_dim, kv_longest);
  }
  if (!MixedCallLaunchesEmptyTiles(attention_)) {  // packed: FA3, FlashInfer
    const double launch_us = c_.attention_launch_s * 1e6;
    return AttentionPrefillUs(1, chunk, history, q_heads, kv_heads, head_dim) +
           AttentionDecodeUs(decodes, kv, q_heads, kv_heads, head_dim, kv_longest) - launch_us;
  }
  TileWork work = MixedTiles(chunk, history, decodes, kv, q_heads, kv_heads, head_dim);
  // The longest decode's tile walks its own context (decode skew).
  if (kv_longest > kv) {
    work.longest_s =
        std::max(work.longest_s,
                 c_.attention_tile_s + kv_longest * TileKeySeconds(query_tile_rows_, head_dim));
  }
  return CallUs(work, q_heads, kv_heads);
}

// Unpacked, a decode is a one-token query's tile over its kv - 1 cached tokens and itself.
// FA2's grid gives every sequence the chunk's ceil(chunk / rows) query blocks per head: the
// decode's others are empty tiles that return at once.
KernelRoofline::TileWork KernelRoofline::MixedTiles(double chunk, double history, double decodes,
                                                    double kv, double q_heads, double kv_heads,
                                                    double head_dim) const {
  TileWork work;
  AddPrefillTiles(work, 1, chunk, history, q_heads, kv_heads, head_dim);
  AddPrefillTiles(work, decodes, 1, kv - 1, q_heads, kv_heads, head_dim);
  work.empty_tiles = decodes * q_heads * (std::ceil(chunk / query_tile_rows_) - 1);
  return work;
}

KernelRoofline::MixedCallReport KernelRoofline::MixedLaunch(double chunk, double history,
                                                            double decodes, double kv,
                                                            double q_heads, double kv_heads,
                                                            double head_dim) const {
  if (!MixedCallLaunchesEmptyTiles(attention_)) {
    return {.us = AttentionMixedUs(chunk, history, decodes, kv, q_heads, kv_heads, head_dim)};
  }
  const TileWork work = MixedTiles(chunk, history, decodes, kv, q_heads, kv_heads, head_dim);
  return {.one_grid = true,
          .tiles = work.tiles,
          .empty_tiles = work.empty_tiles,
          .empty_us = EmptyTilesSeconds(work) * 1e6,
          .us = CallUs(work, q_heads, kv_heads)};
}

// The short convolution streams its input and output once, and each sequence's conv state
// (kernel - 1 columns) in and out. It reaches about half the bandwidth (H200: 41 kB per
// token at 2.5 TB/s), and costs about 4 us from 16 tokens per prompt up but only 2 us for
// 1-4 tokens, which the shared gdn_launch_s overcharges (+27-44 % on those rows).
double KernelRoofline::GdnConvPrefillUs(double sequences, double tokens, double conv_dim,
                                        double kernel) const {
  const double bytes = (2 * tokens + 2 * sequences * (kernel - 1)) * conv_dim * act_bytes_;
  return (bytes / (bandwidth_ * c_.gdn_conv_efficiency) + c_.gdn_launch_s) * 1e6;
}

// One work item per sequence and value head walks that sequence's 64-token chunks in order
// (the state carries from chunk to chunk), so items, not tokens, fill the SMs, in whole
// waves: on the H200 table a 16k-token prompt takes 0.79 ms on 2 heads as on 48, and 192
// items (two waves) take as long on 6 heads x 32 prompts as on 48 heads x 4. Each item
// loads and finally stores its fp32 Dk x Dv state outside its chunk loop; a partial last
// chunk costs a whole one (measured time is flat from 1 to 64 tokens per prompt).
double KernelRoofline::GdnChunkPrefillUs(double sequences, double tokens, double k_heads,
                                         double v_heads, double dk, double dv) const {
  const double items = sequences * v_heads;
  const double chunks = sequences * std::ceil(tokens / sequences / kGdnChunkTokens);
  const double state_bytes = 2 * items * dk * dv * 4;
  // Per chunk token and head: the state products (q S, k S and the rank-64 update) and
  // the intra-chunk attention and WY terms.
  const double flops =
      chunks * kGdnChunkTokens * v_heads * (4.0 * dk * dv + 4.0 * kGdnChunkTokens * (dk + dv));
  const double token_bytes = tokens * (2 * k_heads * dk + 2 * v_heads * dv) * act_bytes_;
  const double memory_bw = bandwidth_ * c_.memory_efficiency;
  const double loop =
      std::max(flops / (peak_flops_ * c_.gdn_chunk_efficiency), token_bytes / memory_bw);
  const double occupancy = items / (compute_units_ * std::ceil(items / compute_units_));
  return ((state_bytes / memory_bw + loop) / occupancy + c_.gdn_launch_s) * 1e6;
}

// causal_conv1d_update reads and writes the (kernel - 1)-column conv state, reads the new
// token's channels and writes them convolved. Unlike the prefill convolution it streams
// at the GEMMs' memory efficiency (2.5 % MAPE on H200 with it).
double KernelRoofline::GdnConvDecodeUs(double batch, double conv_dim, double kernel) const {
  const double bytes = batch * conv_dim * 2 * kernel * act_bytes_;
  return (bytes / (bandwidth_ * c_.memory_efficiency) + c_.gdn_update_launch_s) * 1e6;
}

// The recurrent step reads and writes each sequence's fp32 state, split over the SMs in
// 8-row tiles; its flops (6 per state element) are negligible against 8 bytes moved.
double KernelRoofline::GdnRecurrentDecodeUs(double batch, double k_heads, double v_heads, double dk,
                                            double dv) const {
  const double bytes = 2 * batch * v_heads * dk * dv * 4 +
                       batch * (2 * k_heads * dk + 2 * v_heads * dv) * act_bytes_;
  const double tiles = batch * v_heads * std::ceil(dv / kGdnDecodeTileRows);
  const double occupancy = std::min(1.0, tiles / compute_units_);
  return (bytes / (bandwidth_ * c_.memory_efficiency) / occupancy + c_.gdn_launch_s) * 1e6;
}

double KernelRoofline::MoeUs(double tokens, double hidden, double inter, double top_k,
                             double activated, double shared_inter, const WeightFormat* format,
                             double masked_top_k) const {
  const double flops = 2 * tokens * (top_k * 3 * hidden * inter + 3 * hidden * shared_inter);
  const double weight_bytes = format ? format->bytes_per_weight : act_bytes_;
  const double weights =
      (activated * 3 * hidden * inter + 3 * hidden * shared_inter) * weight_bytes;
  const double rows_per_expert = tokens * top_k / std::max(1.0, activated);
  const double efficiency =
      c_.gemm_efficiency * rows_per_expert / (rows_per_expert + c_.gemm_half_m);
  const double compute = flops / (peak_flops_ * efficiency);
  // Every pair's rows (FusedMoeRowOutputs, FusedMoeRowKernels): the GEMMs' outputs, and a
  // local pair's activation read, in the GEMMs' memory term; the activation and moe_sum
  // kernels after them. A shared expert's intermediates, per token, alike.
  const double pairs = tokens * top_k;
  const double masked = tokens * masked_top_k;
  const double gemm_rows = (FusedMoeRowOutputs(inter, hidden) + inter) * pairs +
                           FusedMoeRowOutputs(inter, hidden) * masked + 3 * shared_inter * tokens;
  const double kernel_rows =
      FusedMoeRowKernels(inter, hidden) * (pairs + masked) + 3 * shared_inter * tokens;
  const double stream = StreamBytesPerSecond();
  const double memory = (weights + (4 * tokens * hidden + gemm_rows) * act_bytes_) / stream;
  return (std::max(compute, memory) + kernel_rows * act_bytes_ / stream + 4 * c_.launch_s) * 1e6;
}

AnalyticKernels::AnalyticKernels(const ModelCard& card, const HardwareSpec& hardware, int tp,
                                 AnalyticConstants constants)
    : AnalyticKernels(card, hardware, tp, DefaultAttentionPlan(hardware.attention),
                      card.quantization.value_or(Quantization{}), constants) {}

AnalyticKernels::AnalyticKernels(const ModelCard& card, const HardwareSpec& hardware, int tp,
                                 const AttentionPlan& attention, const Quantization& quantization,
                                 AnalyticConstants constants)
    : card_(card),
      tp_(tp),
      r_(hardware, card.dtype, attention, constants),
      act_bytes_(BytesOf(card.dtype)),
      quantization_(quantization),
      quantized_(WeightFormatFor(quantization, hardware, card.dtype)) {}

// The checkpoint module a GEMM kernel multiplies by (for the quantization's exclusions).
namespace {
const char* ModuleOf(Kernel kernel) {
  switch (kernel) {
    case Kernel::kQkvProj:
      return "model.layers.0.self_attn.qkv_proj";
    case Kernel::kOProj:
      return "model.layers.0.self_attn.o_proj";
    case Kernel::kGateUpProj:
      return "model.layers.0.mlp.gate_up_proj";
    case Kernel::kDownProj:
      return "model.layers.0.mlp.down_proj";
    case Kernel::kGdnInProj:
      return "model.layers.0.linear_attn.in_proj_qkvz";
    case Kernel::kGdnOutProj:
      return "model.layers.0.linear_attn.out_proj";
    case Kernel::kMtpFc:
      return "mtp.fc";
    default:  // lm_head and the embedding stay in the model dtype
      return nullptr;
  }
}
}  // namespace

const WeightFormat* AnalyticKernels::FormatOf(Kernel kernel) const {
  const char* module = ModuleOf(kernel);
  return module && quantization_.Quantizes(module) ? &quantized_ : nullptr;
}

DecodeGridReport AnalyticKernels::DecodeLaunch(int64_t n, int64_t kv) const {
  const AttentionHeads h = HeadsPerRank();
  return r_.DecodeLaunch(static_cast<double>(n), static_cast<double>(kv), h.q, h.kv, h.dim);
}

std::optional<GemmDims> AnalyticKernels::GemmDimsOf(Kernel kernel) const {
  const double h = static_cast<double>(card_.hidden_size);
  const double tp = tp_;
  const AttentionShape& a = card_.attention;
  const double q_heads = a.num_q_heads / tp;
  const double kv_heads = KvHeadsPerRank(card_, tp_);
  const double inter = static_cast<double>(card_.intermediate_size) / tp;
  switch (kernel) {
    case Kernel::kQkvProj:
      return GemmDims{
          q_heads * a.head_dim * (a.output_gate ? 2 : 1) + kv_heads * (a.head_dim + a.v_head_dim),
          h};
    case Kernel::kOProj:
      return GemmDims{h, q_heads * a.v_head_dim};
    case Kernel::kGateUpProj:
      return GemmDims{2 * inter, h};
    case Kernel::kDownProj:
      return GemmDims{h, inter};
    case Kernel::kLmHead:
      return GemmDims{static_cast<double>(card_.vocab_size) / tp, h};
    case Kernel::kMtpFc:
      // qwen3_5_mtp.py: fc = ColumnParallelLinear(2 x hidden, hidden): each rank computes
      // hidden / tp outputs from the concatenated embedding and hidden state.
      if (card_.mtp_layers == 0) return std::nullopt;
      return GemmDims{h / tp, 2 * h};
    case Kernel::kGdnInProj:
    case Kernel::kGdnOutProj: {
      if (!card_.linear) return std::nullopt;
      const LinearAttentionShape& g = *card_.linear;
      const double key = g.num_k_heads * g.k_head_dim / tp;
      const double value = g.num_v_heads * g.v_head_dim / tp;
      if (kernel == Kernel::kGdnInProj)
        return GemmDims{2 * key + 2 * value + 2 * g.num_v_heads / tp, h};
      return GemmDims{h, value};
    }
    default:
      return std::nullopt;
  }
}

std::optional<double> AnalyticKernels::DenseUs(Kernel kernel, int64_t tokens) const {
  if (FileOf(kernel) != BundleFile::kDense) return std::nullopt;
  const auto t = static_cast<double>(tokens);
  if (const auto gemm = GemmDimsOf(kernel)) {
    const WeightFormat* format = FormatOf(kernel);
    // A quantized GDN input projection is two GEMMs: in_proj_qkvz in the quantized format,
    // and the gates' in_proj_ba (2 x value heads wide) wherever the quantization leaves it.
    if (kernel == Kernel::kGdnInProj && format != nullptr) {
      const double ba = 2.0 * card_.linear->num_v_heads / tp_;
      const bool ba_quantized = quantization_.Quantizes("model.layers.0.linear_attn.in_proj_ba");
      return r_.GemmUs(t, gemm->n - ba, gemm->k, format) +
             r_.GemmUs(t, ba, gemm->k, ba_quantized ? format : nullptr);
    }
    return r_.GemmUs(t, gemm->n, gemm->k, format);
  }
  const double h = static_cast<double>(card_.hidden_size);
  const double tp = tp_;
  const AttentionShape& a = card_.attention;
  const double q_heads = a.num_q_heads / tp;
  const double kv_heads = KvHeadsPerRank(card_, tp_);
  switch (kernel) {
    case Kernel::kEmbedding:
      return r_.ElementwiseUs(2 * t * h * act_bytes_);
    case Kernel::kLayernorm:
    case Kernel::kFinalLayernorm:
      return r_.ElementwiseUs(2 * t * h * act_bytes_ + h * 4);
    case Kernel::kQkNorm:
      if (!a.qk_norm) return std::nullopt;
      return r_.ElementwiseUs(2 * t * (q_heads + kv_heads) * a.head_dim * act_bytes_);
    case Kernel::kRotaryEmb:
      return r_.ElementwiseUs(2 * t * (q_heads + kv_heads) * a.head_dim * act_bytes_);
    case Kernel::kActFn:
      return r_.ElementwiseUs(3 * t * static_cast<double>(card_.intermediate_size) / tp *
                              act_bytes_);
    case Kernel::kGdnNorm:
    case Kernel::kGdnGlue: {
      if (!card_.linear) return std::nullopt;
      const LinearAttentionShape& g = *card_.linear;
      const double key = g.num_k_heads * g.k_head_dim / tp;
      const double value = g.num_v_heads * g.v_head_dim / tp;
      if (kernel == Kernel::kGdnNorm) return r_.ElementwiseUs(3 * t * value * act_bytes_);
      return r_.ElementwiseUs(4 * t * (2 * key + 2 * value) * act_bytes_);
    }
    default:  // the GEMMs without their dims (GDN's, without GDN) and other profiles' kernels
      return std::nullopt;
  }
}

std::optional<double> AnalyticKernels::PerSequenceUs(Kernel kernel, int64_t sequences) const {
  const auto s = static_cast<double>(sequences);
  const double vocab = static_cast<double>(card_.vocab_size);
  switch (kernel) {
    case Kernel::kLmHead:  // (GemmDimsOf(kLmHead) gives the same n and k.)
      return r_.GemmUs(s, vocab / tp_, static_cast<double>(card_.hidden_size));
    case Kernel::kSampler:  // reads the gathered fp32 logits a few times (softmax, top-k/p, draw)
      return r_.ElementwiseUs(3 * s * vocab * 4);
    default:
      return std::nullopt;
  }
}

AnalyticKernels::AttentionHeads AnalyticKernels::HeadsPerRank() const {
  const AttentionShape& a = card_.attention;
  return {a.num_q_heads / static_cast<double>(tp_), static_cast<double>(KvHeadsPerRank(card_, tp_)),
          (a.head_dim + a.v_head_dim) / 2.0};
}

double AnalyticKernels::AttentionPrefillUs(int64_t chunk, int64_t kv_prefill) const {
  const AttentionHeads h = HeadsPerRank();
  return r_.AttentionPrefillUs(1, static_cast<double>(chunk), static_cast<double>(kv_prefill), h.q,
                               h.kv, h.dim);
}

double AnalyticKernels::AttentionDecodeUs(int64_t n, int64_t kv, int64_t kv_longest) const {
  const AttentionHeads h = HeadsPerRank();
  return r_.AttentionDecodeUs(static_cast<double>(n), static_cast<double>(kv), h.q, h.kv, h.dim,
                              static_cast<double>(kv_longest));
}

KernelRoofline::MixedCallReport AnalyticKernels::MixedLaunch(int64_t chunk, int64_t kv_prefill,
                                                             int64_t n, int64_t kv) const {
  const AttentionHeads h = HeadsPerRank();
  return r_.MixedLaunch(static_cast<double>(chunk), static_cast<double>(kv_prefill),
                        static_cast<double>(n), static_cast<double>(kv), h.q, h.kv, h.dim);
}

double AnalyticKernels::AttentionMixedUs(int64_t chunk, int64_t kv_prefill, int64_t n, int64_t kv,
                                         int64_t kv_longest) const {
  const AttentionHeads h = HeadsPerRank();
  return r_.AttentionMixedUs(static_cast<double>(chunk), static_cast<double>(kv_prefill),
                             static_cast<double>(n), static_cast<double>(kv), h.q, h.kv, h.dim,
                             static_cast<double>(kv_longest));
}

std::optional<double> AnalyticKernels::GdnUs(Kernel kernel, int64_t prefill_tokens,
                                             int64_t n_decode) const {
  if (!card_.linear || FileOf(kernel) != BundleFile::kLinearAttention) return std::nullopt;
  if ((prefill_tokens <= 0 && n_decode <= 0) ||
      !RunsIn(kernel, RegimeOf(prefill_tokens > 0, n_decode > 0)))
    return std::nullopt;
  const LinearAttentionShape& g = *card_.linear;
  const double tp = tp_;
  const auto t = static_cast<double>(prefill_tokens);
  const auto n = static_cast<double>(n_decode);
  const double conv_dim = static_cast<double>(g.ConvDim()) / tp;
  const double k_heads = g.num_k_heads / tp;
  const double v_heads = g.num_v_heads / tp;
  const double kernel_width = g.conv_kernel;
  // A bundle cell knows its prefill tokens, not how many prompts they belong to: assume one
  // per 2048 tokens (a long prompt's chunk, or a few short prompts).
  const double sequences = std::max(1.0, std::ceil(t / 2048));
  switch (kernel) {
    case Kernel::kGdnConvPrefill:
      return r_.GdnConvPrefillUs(sequences, t, conv_dim, kernel_width);
    case Kernel::kGdnPostConv:
      return r_.ElementwiseUs(3 * t * conv_dim * act_bytes_);
    case Kernel::kGdnPrefill:
      return r_.GdnChunkPrefillUs(sequences, t, k_heads, v_heads, g.k_head_dim, g.v_head_dim);
    case Kernel::kGdnConvDecode:
      return r_.GdnConvDecodeUs(n, conv_dim, kernel_width);
    case Kernel::kGdnDecode:
    case Kernel::kGdnDecodeMixed:
      return r_.GdnRecurrentDecodeUs(n, k_heads, v_heads, g.k_head_dim, g.v_head_dim);
    default:  // gdn_core: the packed operator of other profiles
      return std::nullopt;
  }
}

double AnalyticKernels::MoeUs(int64_t tokens, int64_t activated) const {
  if (!card_.moe) return -1;
  const MoeShape& m = *card_.moe;
  const WeightFormat* format =
      quantization_.Quantizes("model.layers.0.mlp.experts") ? &quantized_ : nullptr;
  return r_.MoeUs(static_cast<double>(tokens), static_cast<double>(card_.hidden_size),
                  static_cast<double>(m.expert_intermediate) / tp_, m.experts_per_token,
                  static_cast<double>(activated),
                  static_cast<double>(m.shared_expert_intermediate) / tp_, format);
}

}  // namespace fleetsim
