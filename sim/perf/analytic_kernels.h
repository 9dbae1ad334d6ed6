// The analytic model of every kernel a serving step runs: a roofline (compute against
// memory traffic) with occupancy, per GPU from the hardware catalog. Used to build
// bundles for hardware nobody profiled (`fleetsim bundle build --source analytic`).
//
//   time = max(flops / (peak x compute efficiency), bytes / (bandwidth x memory efficiency))
//          / occupancy + launch latency
// GDN's chunked delta rule is the exception to the roofline's max(): each (sequence, value
// head) walks its chunks on one SM after loading its fp32 state (see GdnChunkPrefillUs).
// Compute efficiency falls at small GEMM m (too few rows to fill the tensor cores):
// eff(m) = gemm_efficiency x m / (m + gemm_half_m). Quantized weights (perf/weight_format.h)
// stream fewer bytes and, where the GPU cannot multiply their format, pay a
// dequantization on the vector units. Paged-attention decode is priced by the launch grid
// of the decode kernel the instance runs (perf/decode_kernels.h, the AttentionPlan):
// sequences x KV heads per rank x splits, against the GPU's compute units -- one sequence
// with 2 KV heads on a kernel without a split leaves an 84-CU card almost idle.
// An attention call with multi-token queries runs thread-block tiles of the backend's query
// rows (the catalog's attention_backend.query_tile): FlashAttention 3 packs a KV group's
// query heads into 128-row tiles, FlashAttention 2 gives every query head its own 64-row
// tiles, a decode in a mixed batch included. Tiles fill the SMs in waves.
//
// The constants (at most four per kernel class) are fleetsim's own, fitted on measured
// H100 and H200 kernel tables by `fleetsim bundle calibrate` (docs/BUNDLES.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "model/attention_backend.h"
#include "model/hardware.h"
#include "model/model_card.h"
#include "model/quantization.h"
#include "perf/decode_kernels.h"
#include "perf/layer_kernels.h"
#include "perf/weight_format.h"

namespace fleetsim {

struct AnalyticConstants {
  // Defaults: fitted by `fleetsim bundle calibrate` on the measured H100 and H200 kernel
  // tables (../shared/data/profiles/aiconfigurator), starting from Uncalibrated().
  // GEMMs: fraction of dense peak reached by large GEMMs, and the m at which half of it is.
  double gemm_efficiency = 0.78961591477653514;
  double gemm_half_m = 70.317041599788922;
  // Memory-bound kernels: fraction of peak bandwidth streamed.
  double memory_efficiency = 0.79660529707640737;
  // Fixed cost per kernel launch, seconds.
  double launch_s = 2.8425211429966394e-06;
  // Attention: fraction of peak in flash prefill; KV split granularity in decode (tokens);
  // the fixed cost of one attention call; and of one query tile on one SM (the backend's
  // query_tile rows over one KV head, or one query head where heads are not packed).
  double attention_efficiency = 0.63629362869298034;
  int64_t kv_split_tokens = 255;
  double attention_launch_s = 8.051266413557586e-06;
  double attention_tile_s = 3.2750891211063594e-06;
  // An empty FlashAttention 2 tile on one SM: a decode's query blocks past its one token,
  // launched because a chunk in the same call is longer (perf/kernel_db/empty_tile_fit.h).
  // Not fitted by `bundle calibrate` (no H100/H200 table has a mixed call, and FA3 launches
  // no such tiles) but on ONE measured FA2 table that no validated run uses, the RTX PRO
  // 6000's Qwen3-32B at TP 1 (../shared/data/profiles/llmservingsim): `fleetsim bundle
  // calibrate-empty-tiles <that bundle> --model qwen3-32b --hardware RTX-PRO-6000`. The
  // other LLMServingSim tables are held out (docs/BUNDLES.md).
  double attention_empty_tile_s = 3.5187301574476824e-07;
  // GDN (gated DeltaNet), fitted on the H200 GDN table alone (no other GPU has one):
  // fraction of peak bandwidth the prefill convolution (causal_conv1d_fn) streams, about
  // 0.5 -- the decode update and the fp32 state stream at memory_efficiency; fraction of
  // one SM's dense peak the chunked delta rule reaches on its 64-token chunks; the fixed
  // cost of one single-token convolution update (causal_conv1d_update, ~1.8 us measured);
  // and of one prefill convolution or delta-rule call (~3-4 us measured).
  // gdn_update_launch_s is also every elementwise kernel's fixed cost (ElementwiseUs): norms,
  // rotary, activation, embedding and sampler are small memory-bound kernels like it.
  double gdn_conv_efficiency = 0.51392901493289511;
  double gdn_chunk_efficiency = 0.33124154449688636;
  double gdn_update_launch_s = 1.8263082210364104e-06;
  double gdn_launch_s = 3.1065900764167813e-06;

  // The hand-set starting point of the calibration: attention launching like a GEMM and
  // no per-tile cost.
  static AnalyticConstants Uncalibrated();
};
// The chunked delta rule's chunk (vLLM / FLA / FlashInfer chunk_gated_delta_rule: BT = 64).
inline constexpr double kGdnChunkTokens = 64;
// Value rows per recurrent-decode work tile, as in FlashInfer's gdn_decode.py (an 8 x 128
// state tile per CTA; FLA's fused recurrent kernel likewise splits Dv into small blocks).
// The measured vLLM packed-decode kernel's tile is not published; with any such split one
// decode already spans many SMs, so its ~4 us floor is the launch, not streaming.
inline constexpr double kGdnDecodeTileRows = 8;

// What vLLM's fused MoE moves per token-expert pair row, in elements (fused_moe.py's
// intermediate caches). Every row, its expert on this GPU or not, passes the GEMMs'
// outputs (the first writes 2 x inter, the second hidden; zeros for another GPU's expert,
// write_zeros_to_output) and the kernels after them (the activation reads 2 x inter and
// writes inter, moe_sum reads hidden). A row of this GPU's expert also has the second GEMM
// read its inter-wide activation.
inline double FusedMoeRowOutputs(double inter, double hidden) {
  return 2 * inter + hidden;
}
inline double FusedMoeRowKernels(double inter, double hidden) {
  return 3 * inter + hidden;
}

// Whether a mixed step's attention is one grid of unpacked tiles sized by the longest
// query -- FlashAttention 2 (a split-KV decode kernel whose query heads are not packed
// into tiles) -- so that a decode beside a longer chunk launches empty tiles. FA3 and
// FlashInfer pack the heads and schedule only real tiles; ROCm's mixed step is two calls.
inline bool MixedCallLaunchesEmptyTiles(const AttentionPlan& plan) {
  return plan.decode.grid == DecodeGrid::kFlashSplit && !plan.backend.packs_gqa;
}

// Kernels by explicit shape, for one GPU: what the card-level model below is built on,
// and what calibration and comparison against measured kernel tables evaluate.
class KernelRoofline {
 public:
  // With the GPU's default attention plan for a typical GQA model (DefaultAttentionPlan).
  KernelRoofline(const HardwareSpec& hardware, Dtype dtype, AnalyticConstants constants = {});
  // With the attention backend and decode kernel an instance resolved.
  KernelRoofline(const HardwareSpec& hardware, Dtype dtype, AttentionPlan attention,
                 AnalyticConstants constants = {});

  // `weights`: the stored format (nullptr: the activation dtype).
  double GemmUs(double m, double n, double k, const WeightFormat* weights = nullptr) const;
  double ElementwiseUs(double bytes) const;
  // The rate a streaming kernel reads or writes memory at: the card's measured fraction of
  // nominal where the catalog has one, else the fitted memory_efficiency.
  double StreamBytesPerSecond() const { return bandwidth_ * c_.memory_efficiency; }
  // `batch` causal prefills of `chunk` tokens over `history` cached tokens each.
  double AttentionPrefillUs(double batch, double chunk, double history, double q_heads,
                            double kv_heads, double head_dim) const;
  // `batch` decodes over `kv` tokens each (history and the new ones); or over `kv` on
  // average with the longest over `kv_longest` (decode skew: that sequence's share of the
  // work outlasts the rest). `query_len` new tokens per sequence (1; more with speculative
  // tokens, which every backend serves as a prefill-style call, see perf/decode_kernels.h).
  double AttentionDecodeUs(double batch, double kv, double q_heads, double kv_heads,
                           double head_dim, double kv_longest = 0, double query_len = 1) const;
  // The decode kernel's launch grid for that call (one query token per sequence).
  DecodeGridReport DecodeLaunch(double batch, double kv, double q_heads, double kv_heads,
                                double head_dim, double kv_longest = 0) const;
  // One call serving a prefill chunk of `chunk` tokens over `history` cached tokens and
  // `decodes` decodes over `kv` cached tokens each, as vLLM runs a mixed step (one varlen
  // call per layer, so one launch).
  double AttentionMixedUs(double chunk, double history, double decodes, double kv, double q_heads,
                          double kv_heads, double head_dim, double kv_longest = 0) const;
  // That call's tiles where one grid runs them all (FlashAttention 2; `one_grid` false
  // elsewhere, with only `us` set).
  struct MixedCallReport {
    bool one_grid = false;
    double tiles = 0;        // the chunk's query blocks and the decodes' one each, per head
    double empty_tiles = 0;  // the decodes' other query blocks, which return at once
    double empty_us = 0;     // what they cost the call
    double us = 0;           // the call, as AttentionMixedUs
  };
  MixedCallReport MixedLaunch(double chunk, double history, double decodes, double kv,
                              double q_heads, double kv_heads, double head_dim) const;
  // Fused MoE: `tokens` tokens, top-k of experts, `activated` distinct experts reached.
  // Under expert parallelism `top_k` counts this GPU's pairs a token and `masked_top_k` the
  // pairs routed to other GPUs' experts, whose rows the kernels still write and read.
  double MoeUs(double tokens, double hidden, double inter, double top_k, double activated,
               double shared_inter, const WeightFormat* weights = nullptr,
               double masked_top_k = 0) const;

  // GDN, heads per rank: `tokens` tokens of `sequences` prompts through the short causal
  // convolution over `conv_dim` channels (2 Hk Dk + Hv Dv) with a `kernel`-wide filter.
  double GdnConvPrefillUs(double sequences, double tokens, double conv_dim, double kernel) const;
  // The chunked delta rule over `sequences` sequences holding `tokens` tokens in all.
  double GdnChunkPrefillUs(double sequences, double tokens, double k_heads, double v_heads,
                           double dk, double dv) const;
  // One decode step of `batch` sequences: the convolution's update, and the recurrent rule.
  double GdnConvDecodeUs(double batch, double conv_dim, double kernel) const;
  double GdnRecurrentDecodeUs(double batch, double k_heads, double v_heads, double dk,
                              double dv) const;

  const AnalyticConstants& constants() const { return c_; }
  double compute_units() const { return compute_units_; }
  const AttentionPlan& attention() const { return attention_; }

 private:
  // The query tiles of one attention call, for their makespan over the SMs.
  struct TileWork {
    double tiles = 0;
    double seconds = 0;      // summed over tiles
    double longest_s = 0;    // the longest tile
    double kv_bytes = 0;     // K and V, read once per KV head
    double other_bytes = 0;  // Q and O
    double empty_tiles = 0;  // FA2's query blocks past their sequence's queries
  };
  void AddPrefillTiles(TileWork& work, double batch, double chunk, double history, double q_heads,
                       double kv_heads, double head_dim) const;
  double TileKeySeconds(double rows, double head_dim) const;
  double CallUs(const TileWork& work, double q_heads, double kv_heads) const;
  // What the work's empty tiles add to the call's makespan, taking their turns on the SMs.
  double EmptyTilesSeconds(const TileWork& work) const {
    return work.empty_tiles * c_.attention_empty_tile_s / compute_units_;
  }
  // FA2's one grid for a mixed call: the chunk's tiles, each decode's, and the empty ones.
  TileWork MixedTiles(double chunk, double history, double decodes, double kv, double q_heads,
                      double kv_heads, double head_dim) const;

  DecodeKernelContext DecodeContext() const;

  AnalyticConstants c_;
  AttentionPlan attention_;
  double query_tile_rows_;
  bool packs_gqa_;
  double peak_flops_;
  double bandwidth_;
  double compute_units_;
  double act_bytes_;
};

// A GEMM's output width n and reduction depth k (its m is the step's tokens or sequences).
struct GemmDims {
  double n = 0;
  double k = 0;
};

class AnalyticKernels {
 public:
  // The GPU's default attention plan and the checkpoint's own quantization.
  AnalyticKernels(const ModelCard& card, const HardwareSpec& hardware, int tp,
                  AnalyticConstants constants = {});
  // The attention plan and quantization an instance resolved (engine/kv_cache_layout.h,
  // engine/engine_config.h).
  AnalyticKernels(const ModelCard& card, const HardwareSpec& hardware, int tp,
                  const AttentionPlan& attention, const Quantization& quantization,
                  AnalyticConstants constants = {});
  // The kernels keep a reference to the card: a temporary one would leave it dangling.
  AnalyticKernels(ModelCard&& card, const HardwareSpec& hardware, int tp,
                  AnalyticConstants constants = {}) = delete;
  AnalyticKernels(ModelCard&& card, const HardwareSpec& hardware, int tp,
                  const AttentionPlan& attention, const Quantization& quantization,
                  AnalyticConstants constants = {}) = delete;

  // Microseconds for `tokens` tokens of a dense.csv kernel; nullopt for one the model
  // does not have (qk_norm without q/k norms, GDN kernels of a model without GDN) or the
  // analytic model does not price (fused kernels and glue of other profiles).
  std::optional<double> DenseUs(Kernel kernel, int64_t tokens) const;
  // The (n, k) of a kernel that is a GEMM at this TP (projections and lm_head).
  std::optional<GemmDims> GemmDimsOf(Kernel kernel) const;
  // The storage format of a GEMM kernel's weights (nullptr: the model dtype).
  const WeightFormat* FormatOf(Kernel kernel) const;
  // One decode step's attention launch grid for `n` sequences over `kv` tokens.
  DecodeGridReport DecodeLaunch(int64_t n, int64_t kv) const;
  const KernelRoofline& roofline() const { return r_; }
  // lm_head and sampler for `sequences` sampled sequences; nullopt for other kernels.
  std::optional<double> PerSequenceUs(Kernel kernel, int64_t sequences) const;
  // One attention layer: a prefill chunk over kv_prefill tokens of history, or n decodes
  // over kv tokens each.
  double AttentionPrefillUs(int64_t chunk, int64_t kv_prefill) const;
  // `kv_longest` (default `kv`): the longest decode's context when they differ.
  double AttentionDecodeUs(int64_t n, int64_t kv, int64_t kv_longest = 0) const;
  // One attention layer of a mixed step: the chunk and n decodes in one call.
  double AttentionMixedUs(int64_t chunk, int64_t kv_prefill, int64_t n, int64_t kv,
                          int64_t kv_longest = 0) const;
  KernelRoofline::MixedCallReport MixedLaunch(int64_t chunk, int64_t kv_prefill, int64_t n,
                                              int64_t kv) const;
  // One GDN regime kernel (gdn_conv_prefill, gdn_post_conv, gdn_prefill, gdn_conv_decode,
  // gdn_decode, gdn_decode_mixed) for `prefill_tokens` prefill tokens and `n_decode` decodes;
  // nullopt outside the regimes it runs in (RunsIn), for gdn_core and without GDN layers.
  std::optional<double> GdnUs(Kernel kernel, int64_t prefill_tokens, int64_t n_decode) const;
  // The MoE block of one layer for `tokens` tokens reaching `activated` experts.
  double MoeUs(int64_t tokens, int64_t activated) const;

 private:
  // Query heads, KV heads and head dim of one attention layer on one rank.
  struct AttentionHeads {
    double q = 0, kv = 0, dim = 0;
  };
  AttentionHeads HeadsPerRank() const;

  const ModelCard& card_;
  int tp_;
  KernelRoofline r_;
  double act_bytes_;
  Quantization quantization_;
  WeightFormat quantized_;  // the format of every quantized module
};

}  // namespace fleetsim
