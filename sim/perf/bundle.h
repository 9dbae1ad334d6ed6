// A performance bundle: the measured (or built) kernel latencies one engine is charged,
// per tensor-parallel degree. A bundle is a directory with meta.yaml and one tp<N>/
// folder per TP degree holding dense.csv, attention.csv, per_sequence.csv and, where the
// model has them, linear_attention.csv and moe.csv, and optionally allreduce.csv with
// measured all-reduces (files and columns: perf/bundle_format.h; SPEC.md, "Performance
// bundles"). Times are microseconds in the files and in these tables. The tables keep the
// files' kernel names, those fleetsim does not know included (a measured bundle's, for
// `bundle compare`); Curve finds a known kernel's.
//
//   Bundle bundle =
//   LoadBundle("../shared/data/profiles/llmservingsim/perf/RTX4090/meta-llama/Llama-3.1-8B/bf16");
//   const BundleTables& tables = bundle.ForTp(1);   // an unknown TP lists the ones there are
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "perf/grid_table.h"
#include "perf/layer_kernels.h"
#include "perf/skew_fit.h"

namespace fleetsim {

// The attention kernel, split into its three regimes, each a complete regular grid:
// prefill-only (chunk, key), decode-only (n_decode, kv_decode) and mixed (all four).
// The prefill coordinate is prefill_key (ENGINE_SEMANTICS.md section 9); legacy tables
// are gridded on kv_prefill = prefill_key - chunk / 2, converted at lookup.
struct AttentionTables {
  GridTable prefill;
  GridTable decode;
  GridTable mixed;
  bool legacy_kv_prefill = false;
};

// One regime kernel of a GDN layer. A regime it never runs in has no table and costs
// nothing there. The prefill-token axis is held in 64-token scan chunks, so that the
// cost steps up just past each chunk boundary instead of rising along a line.
struct GdnKernelTables {
  GridTable prefill;  // (prefill chunks)
  GridTable decode;   // (n_decode)
  GridTable mixed;    // (prefill chunks, n_decode)
};
inline constexpr int kGdnScanChunk = 64;

struct BundleTables {
  int tp = 1;
  std::map<std::string, GridTable> dense;         // kernel -> (tokens)
  std::map<std::string, GridTable> per_sequence;  // kernel -> (sequences)
  AttentionTables attention;
  std::map<std::string, GdnKernelTables> linear_attention;
  std::optional<GridTable> moe;  // (tokens, activated experts)
  // A measured all-reduce at this TP degree, by message bytes (allreduce.csv:
  // bytes,time_us); when absent, the collective model (perf/collective.h) prices them.
  std::optional<GridTable> allreduce;
  // The decode-skew correction (skew_fit.csv and meta.yaml's skew_fit block); absent: none.
  std::optional<SkewFit> skew;

  // A dense.csv or per_sequence.csv kernel's curve; nullptr when the bundle lacks it (or
  // the kernel is in another file).
  const GridTable* Curve(Kernel kernel) const;
};

// What the engine that produced the bundle resolved, per TP degree (fleetsim bundles).
struct BundleEngineResolved {
  int block_size = 0;
  int64_t kv_cache_bytes = 0;  // 0 when the weights do not fit (weights_do_not_fit says why)
  int max_num_batched_tokens = 0;
  std::string attention_backend;  // empty in bundles that predate it
  std::string decode_kernel;
};

struct Bundle {
  std::string dir;
  std::string source = "measured";  // measured | kernel-db | analytic
  std::string hardware;
  std::string model;
  std::optional<int> block_size;  // published bundles: engine_effective.block_size
  bool enforce_eager = false;     // profiled without CUDA graphs
  std::map<int, BundleTables> per_tp;
  std::vector<int> unread_tp;  // tp<N>/ folders LoadBundle was told to leave unread
  std::map<int, BundleEngineResolved> engine_resolved;

  // The TP degrees whose tables were read.
  std::vector<int> TpDegrees() const;
  // The tables for `tp`; an InputError listing the available degrees when absent.
  const BundleTables& ForTp(int tp) const;
};

// Reads the bundle in `dir`: every TP degree's tables, or only `only_tp`'s (a run needs
// one; a large bundle's other degrees would cost most of its loading time).
Bundle LoadBundle(const std::string& dir, std::optional<int> only_tp = std::nullopt);

// What a bundle's meta.yaml says it was measured or built for and `model` / `hardware` are
// not (one line each; empty when they agree or meta.yaml does not say). Names are compared
// by their letters and digits, and one may extend the other: a published bundle's
// "meta-llama/Llama-3.1-8B" on "RTX4090" is llama-3.1-8b on RTX-4090.
std::vector<std::string> BundleMismatches(const Bundle& bundle, const std::string& model,
                                          const std::string& hardware);

}  // namespace fleetsim
