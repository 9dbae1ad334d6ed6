#include "bundles/analytic_bundle.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iomanip>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string_view>
#include <unistd.h>
#include <utility>

#include "core/hash64.h"
#include "core/input_error.h"
#include "core/project_paths.h"
#include "core/text_file.h"
#include "engine/engine_config.h"
#include "engine/kv_cache_layout.h"
#include "model/cache_shapes.h"
#include "model/hardware.h"
#include "model/model_catalog.h"
#include "model/weight_count.h"
#include "perf/analytic_kernels.h"

namespace fleetsim {
namespace {

namespace fs = std::filesystem;

// Bumped whenever the kernel model or the grids change, so cached bundles are rebuilt.
constexpr const char* kGeneratorVersion = "analytic-10";

// From `from` to `to`: the powers of two between them and, with `half_steps`, the points
// halfway (1, 2, 3, 4, 6, 8, 12, 16, ...), about two per octave.
std::vector<int64_t> Grid(int64_t from, int64_t to, bool half_steps = true) {
  std::set<int64_t> points;
  for (int64_t p = 1; p <= to; p *= 2) {
    for (int64_t q : {p, half_steps ? p + p / 2 : p}) {
      if (q >= from && q <= to) points.insert(q);
    }
  }
  points.insert(from);
  points.insert(to);
  return {points.begin(), points.end()};
}

std::string Us(double us) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4f", us);
  return buf;
}

std::vector<std::string> DenseKernels(const ModelCard& card) {
  std::vector<std::string> kernels{"embedding", "final_layernorm", "layernorm"};
  if (card.CountLayers(LayerType::kFullAttention) > 0) {
    for (const char* k : {"qkv_proj", "qk_norm", "rotary_emb", "o_proj"})
      kernels.emplace_back(k);
  }
  if (card.CountMoeLayers() < card.NumLayers()) {
    for (const char* k : {"gate_up_proj", "act_fn", "down_proj"})
      kernels.emplace_back(k);
  }
  if (card.IsHybrid()) {
    for (const char* k : {"gdn_in_proj", "gdn_glue", "gdn_norm", "gdn_out_proj"})
      kernels.emplace_back(k);
  }
  return kernels;
}

// Where each kernel's rows came from: every row measured, none, or some.
class Origins {
 public:
  void Note(const std::string& kernel, bool measured) {
    (measured ? measured_ : analytic_)[kernel] = true;
  }
  std::map<std::string, std::string> ByKernel() const {
    std::map<std::string, std::string> out;
    for (const auto& [k, v] : analytic_)
      out[k] = measured_.contains(k) ? "mixed" : "analytic";
    for (const auto& [k, v] : measured_) {
      if (!analytic_.contains(k)) out[k] = "measured";
    }
    return out;
  }

 private:
  std::map<std::string, bool> measured_, analytic_;
};

// The measured value when the overrides have one, else the analytic one.
double Pick(std::optional<double> measured, double analytic, const std::string& kernel,
            Origins& origins) {
  origins.Note(kernel, measured.has_value());
  return measured ? *measured : analytic;
}

void WriteTp(const ModelCard& card, const HardwareSpec& hardware, int tp, const fs::path& dir,
             const KernelOverrides* overrides, Origins& origins) {
  fs::create_directories(dir);
  const AnalyticKernels k(card, hardware, tp);
  auto dense_us = [&](const std::string& kernel, int64_t t) {
    const double analytic = k.DenseUs(kernel, t);
    if (analytic < 0 || overrides == nullptr) {
      if (analytic >= 0) origins.Note(kernel, false);
      return analytic;
    }
    return Pick(overrides->DenseUs(kernel, t), analytic, kernel, origins);
  };
  auto per_sequence_us = [&](const std::string& kernel, int64_t sequences) {
    const double analytic = k.PerSequenceUs(kernel, sequences);
    if (overrides == nullptr) {
      origins.Note(kernel, false);
      return analytic;
    }
    return Pick(overrides->PerSequenceUs(kernel, sequences), analytic, kernel, origins);
  };
  auto gdn_us = [&](const std::string& kernel, int64_t tokens, int64_t decodes) {
    const double analytic = k.GdnUs(kernel, tokens, decodes);
    if (analytic < 0) return analytic;
    if (overrides == nullptr) {
      origins.Note(kernel, false);
      return analytic;
    }
    return Pick(overrides->GdnUs(kernel, tokens, decodes), analytic, kernel, origins);
  };
  const std::vector<int64_t> tokens = Grid(1, 16384);
  {
    std::ofstream out(dir / "dense.csv");
    out << "layer,tokens,time_us\n";
    for (const std::string& kernel : DenseKernels(card)) {
      for (int64_t t : tokens) {
        const double us = dense_us(kernel, t);
        if (us >= 0) out << kernel << ',' << t << ',' << Us(us) << '\n';
      }
    }
  }
  {
    std::ofstream out(dir / "per_sequence.csv");
    out << "layer,sequences,time_us\n";
    for (const char* kernel : {"lm_head", "sampler"}) {
      for (int64_t s : Grid(1, 4096))
        out << kernel << ',' << s << ',' << Us(per_sequence_us(kernel, s)) << '\n';
    }
  }
  if (card.CountLayers(LayerType::kFullAttention) > 0) {
    // Legacy layout: prefill-only, decode-only and mixed rows. A mixed step is one call
    // (one launch; on FlashAttention 2 its decodes lose their packing and split), so it
    // is not the sum of the other two. Its four axes go in powers of two, as measured
    // bundles do, to keep the table small.
    std::ofstream out(dir / "attention.csv");
    out << "prefill_chunk,kv_prefill,n_decode,kv_decode,time_us\n";
    const int64_t max_len = card.max_position_embeddings;
    std::vector<int64_t> kvs = Grid(16, max_len);
    kvs.insert(kvs.begin(), 0);
    origins.Note("attention", false);
    // Chunks start at one token: a prompt's last chunk, or the one token a full prefix
    // hit leaves to compute, can be that short.
    for (int64_t c : Grid(1, 16384)) {
      for (int64_t kv : kvs)
        out << c << ',' << kv << ",0,0," << Us(k.AttentionPrefillUs(c, kv)) << '\n';
    }
    // A decode's context starts at its prompt's length, which may be a single token. The
    // kv_decode axis is the decodes' cached history, as the engine and measured bundles
    // read it; each decode attends to it and to its own new token.
    for (int64_t n : Grid(1, 2048)) {
      for (int64_t kv : Grid(1, max_len)) {
        const double analytic = k.AttentionDecodeUs(n, kv + 1);
        const double us = overrides == nullptr ? analytic
                                               : Pick(overrides->AttentionDecodeUs(n, kv), analytic,
                                                      "attention", origins);
        out << "0,0," << n << ',' << kv << ',' << Us(us) << '\n';
      }
    }
    const std::vector<int64_t> mixed_kvs = Grid(1, max_len, false);
    std::vector<int64_t> mixed_histories = Grid(16, max_len, false);
    mixed_histories.insert(mixed_histories.begin(), 0);
    for (int64_t c : Grid(1, 16384, false)) {
      for (int64_t history : mixed_histories) {
        for (int64_t n : Grid(1, 2048, false)) {
          for (int64_t kv : mixed_kvs) {
            out << c << ',' << history << ',' << n << ',' << kv << ','
                << Us(k.AttentionMixedUs(c, history, n, kv + 1)) << '\n';
          }
        }
      }
    }
  }
  if (card.IsHybrid()) {
    std::ofstream out(dir / "linear_attention.csv");
    out << "layer,prefill_tokens,n_decode,time_us\n";
    std::vector<int64_t> prefill{0};
    for (int64_t t : Grid(1, 256))
      prefill.push_back(64 * t);  // whole 64-token scan chunks
    std::vector<int64_t> decodes = Grid(1, 2048);
    decodes.insert(decodes.begin(), 0);
    for (const char* kernel : {"gdn_conv_prefill", "gdn_post_conv", "gdn_prefill",
                               "gdn_conv_decode", "gdn_decode", "gdn_decode_mixed"}) {
      for (int64_t t : prefill) {
        for (int64_t n : decodes) {
          if (t == 0 && n == 0) continue;
          const double us = gdn_us(kernel, t, n);
          if (us >= 0) out << kernel << ',' << t << ',' << n << ',' << Us(us) << '\n';
        }
      }
    }
  }
  if (card.moe) {
    std::ofstream out(dir / "moe.csv");
    out << "tokens,activated_experts,time_us\n";
    origins.Note("moe", false);
    const int64_t experts = card.moe->num_experts;
    for (int64_t t : tokens) {
      for (int64_t a : Grid(card.moe->experts_per_token, experts)) {
        if (a > t * card.moe->experts_per_token) continue;  // unreachable
        out << t << ',' << a << ',' << Us(k.MoeUs(t, a)) << '\n';
      }
    }
  }
}

InputError BuildError(std::string_view setting, const std::string& message) {
  return OptionError("--tp", std::string(setting) + ": " + message);
}

// The catalog's measured rates that replaced fitted fractions in the analytic kernels
// (KernelRoofline), so that meta.yaml says what the bundle was built from; empty if none.
std::string CardRatesLine(const HardwareSpec& hardware) {
  std::ostringstream line;
  line << std::setprecision(6);
  const char* sep = "";
  for (const auto& [key, rate] :
       {std::pair{"memory_stream_efficiency", &hardware.memory_stream_efficiency},
        std::pair{"matmul_achievable_flops", &hardware.matmul_achievable_flops}}) {
    if (!*rate) continue;
    line << sep << key << ": " << (*rate)->value;
    sep = ", ";
  }
  if (line.str().empty()) return "";
  return "card_rates: {" + line.str() +
         "}  # measured, from the catalog, in place of fitted fractions\n";
}

// The first line of every meta.yaml fleetsim writes; what marks a folder as one it may
// replace.
constexpr std::string_view kMetaHeader = "# Generated by fleetsim";

// The bundle replaces `dir` whole, so `dir` must not hold anything else: a folder of the
// user's files, or the cache folder that holds the generated bundles.
void RequireReplaceable(const fs::path& dir) {
  if (!fs::exists(dir)) return;
  if (!fs::is_directory(dir)) throw InputError(dir.string(), 0, "", "exists and is not a folder");
  if (fs::is_empty(dir)) return;
  std::ifstream meta(dir / "meta.yaml");
  std::string first_line;
  std::getline(meta, first_line);
  if (first_line.starts_with(kMetaHeader)) return;
  throw InputError(dir.string(), 0, "",
                   "holds files that are not a bundle fleetsim built; the bundle replaces the "
                   "folder whole, so name a new or empty one");
}

}  // namespace

std::vector<int> DefaultTpDegrees(const ModelCard& card, const HardwareSpec& hardware) {
  std::vector<int> tps;
  for (int tp : {1, 2, 4, 8}) {
    if (tp <= hardware.gpus_per_node.value && !CheckTensorParallel(card, tp)) tps.push_back(tp);
  }
  return tps;
}

void WriteAnalyticBundle(const ModelCard& card, const HardwareSpec& hardware,
                         const std::vector<int>& tps, const std::string& dir) {
  BundleRecipe recipe;
  recipe.source = std::string("{kind: analytic, tool: fleetsim, generator: ") + kGeneratorVersion +
                  ", model: roofline+occupancy, calibrated: h100+h200 kernel tables}";
  WriteBundle(card, hardware, tps, dir, recipe);
}

void WriteBundle(const ModelCard& card, const HardwareSpec& hardware, const std::vector<int>& tps,
                 const std::string& dir, const BundleRecipe& recipe) {
  // Absolute: a bare name ("--out b") has no parent part to create.
  const fs::path target = fs::absolute(dir);
  RequireReplaceable(target);
  const fs::path staging = target.string() + ".tmp";
  fs::remove_all(staging);
  fs::create_directories(staging);
  // A build that fails (a TP the model cannot run) leaves nothing behind.
  struct RemoveUnlessKept {
    fs::path dir;
    bool keep = false;
    ~RemoveUnlessKept() {
      std::error_code ignored;
      if (!keep) fs::remove_all(dir, ignored);
    }
  } cleanup{staging};
  std::ofstream meta(staging / "meta.yaml");
  meta << kMetaHeader
       << (recipe.overrides ? " from measured kernel tables where they have the shape, else" : "")
       << " from its analytic kernel model.\n"
       << "model: " << card.name << "\nhardware: " << hardware.name << "\n"
       << "source: " << recipe.source << "\n"
       << CardRatesLine(hardware) << "gdn_layout: historical\ntp_degrees: [";
  for (std::size_t i = 0; i < tps.size(); ++i)
    meta << (i ? ", " : "") << tps[i];
  meta << "]\nengine_resolved:\n  per_tp:\n";
  std::map<int, std::map<std::string, std::string>> kernel_origins;
  for (int tp : tps) {
    EngineConfig config;
    config.tensor_parallel_size = tp;
    const ResolvedEngineConfig engine =
        ResolveEngineConfig(card, config, hardware.UsableMemoryBytes(), BuildError);
    const KvCacheLayout layout = ResolveKvCacheLayout(card, engine, BuildError);
    const int64_t kv_bytes =
        static_cast<int64_t>(static_cast<double>(hardware.UsableMemoryBytes()) * 0.9) -
        CountWeights(card, tp).bytes_per_rank;
    meta << "    " << tp << ": {block_size: " << layout.block_size
         << ", attn_page_bytes_per_token: " << layout.attn_bytes_per_token_per_layer
         << ", mamba_page_bytes: " << layout.mamba_page_bytes
         << ", mamba_page_padded_bytes: " << layout.mamba_page_padded_bytes
         << ", max_num_batched_tokens: " << engine.max_num_batched_tokens
         << ", kv_cache_bytes: " << kv_bytes << "}\n";
    const std::unique_ptr<KernelOverrides> overrides =
        recipe.overrides ? recipe.overrides(tp) : nullptr;
    Origins origins;
    WriteTp(card, hardware, tp, staging / ("tp" + std::to_string(tp)), overrides.get(), origins);
    kernel_origins[tp] = origins.ByKernel();
  }
  meta << "kernel_origin:\n";
  for (const auto& [tp, kernels] : kernel_origins) {
    meta << "  " << tp << ": {";
    bool first = true;
    for (const auto& [kernel, origin] : kernels) {
      meta << (first ? "" : ", ") << kernel << ": " << origin;
      first = false;
    }
    meta << "}\n";
  }
  meta.close();
  fs::remove_all(target);
  fs::create_directories(target.parent_path());
  fs::rename(staging, target);
  cleanup.keep = true;
}

// $FLEETSIM_CACHE, when set and not empty.
std::optional<fs::path> CacheOverride() {
  const char* cache = std::getenv("FLEETSIM_CACHE");
  if (cache == nullptr || *cache == '\0') return std::nullopt;
  return fs::path(cache);
}

// The fingerprint covers the files the bundle is computed from, so that editing either one
// builds a new folder instead of reusing the old figures' bundle.
std::string AnalyticCacheFolder(const ModelCard& card, const HardwareSpec& hardware) {
  uint64_t hash = 0;
  for (const std::string& path : {card.config_path, hardware.file}) {
    const std::string bytes = ReadTextFile(path);
    hash = Mix64(hash ^ bytes.size());
    for (const char c : bytes)
      hash = Mix64(hash ^ static_cast<unsigned char>(c));
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
  return std::string(kGeneratorVersion) + "-" + hex;
}

std::string CachedAnalyticBundle(const ModelCard& card, const HardwareSpec& hardware) {
  // One folder per generator version and inputs: a bundle is never replaced in place, so a
  // process reading one (another rank, a sweep point, a Slurm array task) never sees it
  // vanish.
  const std::optional<fs::path> cache = CacheOverride();
  const fs::path dir = (cache ? *cache / "bundles" / card.name / hardware.name
                              : ModelsDir() / card.name / "bundles" / hardware.name) /
                       AnalyticCacheFolder(card, hardware);
  if (ReadTextFile(dir / "meta.yaml").find(std::string("generator: ") + kGeneratorVersion + ",") ==
      std::string::npos) {
    // Built aside and renamed into place, so that processes starting together never read
    // a half-written bundle.
    const fs::path staging =
        dir.parent_path() / (dir.filename().string() + ".tmp." + std::to_string(::getpid()));
    fs::remove_all(staging);
    WriteAnalyticBundle(card, hardware, DefaultTpDegrees(card, hardware), staging.string());
    std::error_code error;
    fs::rename(staging, dir, error);
    if (error) fs::remove_all(staging);  // another process put the same bundle there first
  }
  return dir.string();
}

const char* AnalyticGeneratorVersion() {
  return kGeneratorVersion;
}

std::vector<std::string> StaleCachedBundles() {
  // The <model>/<hardware> folders of the cache: $FLEETSIM_CACHE/bundles/<m>/<h>, or
  // models/<m>/bundles/<h>.
  std::vector<std::pair<fs::path, std::string>> hardware_dirs;  // and their model's name
  std::error_code error;
  auto children = [&](const fs::path& dir) {
    std::vector<fs::path> out;
    for (const auto& entry : fs::directory_iterator(dir, error)) {
      if (entry.is_directory(error)) out.push_back(entry.path());
    }
    return out;
  };
  const std::optional<fs::path> cache = CacheOverride();
  for (const fs::path& model : children(cache ? *cache / "bundles" : ModelsDir())) {
    for (const fs::path& hw : children(cache ? model : model / "bundles"))
      hardware_dirs.emplace_back(hw, model.filename().string());
  }
  // "analytic-<digits>", optionally "-<16 hex digits>" (the inputs' fingerprint): the
  // version, or "" for any other name.
  const std::string prefix = "analytic-";
  auto version_of = [&](std::string_view name) -> std::string {
    if (const auto dash = name.find('-', prefix.size()); dash != std::string_view::npos) {
      const std::string_view hex = name.substr(dash + 1);
      if (hex.size() != 16 || !std::all_of(hex.begin(), hex.end(), [](char c) {
            return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
          }))
        return "";
      name = name.substr(0, dash);
    }
    if (name.rfind(prefix, 0) != 0 || name.size() == prefix.size()) return "";
    const bool digits = std::all_of(name.begin() + static_cast<std::ptrdiff_t>(prefix.size()),
                                    name.end(), [](char c) { return c >= '0' && c <= '9'; });
    return digits ? std::string(name) : "";
  };
  // The folder a build reads now for this model and GPU; nullopt when either is unknown
  // here (a card given as a config.json path elsewhere): then every folder of the current
  // version is kept.
  auto current_folder = [](const std::string& model,
                           const std::string& gpu) -> std::optional<std::string> {
    try {
      return AnalyticCacheFolder(ModelCatalog(ModelsDir()).Load(model),
                                 LoadHardware(HardwareCatalogDir(), gpu));
    } catch (const InputError&) {
      return std::nullopt;
    }
  };
  const auto an_hour_ago = fs::file_time_type::clock::now() - std::chrono::hours(1);
  std::vector<std::string> stale;
  for (const auto& [hw, model] : hardware_dirs) {
    const std::optional<std::string> current = current_folder(model, hw.filename().string());
    for (const fs::path& dir : children(hw)) {
      const std::string name = dir.filename().string();
      const auto staging = name.find(".tmp.");
      if (staging != std::string::npos) {
        if (!version_of(std::string_view(name).substr(0, staging)).empty() &&
            fs::last_write_time(dir, error) < an_hour_ago && !error) {
          stale.push_back(dir.string());
        }
        continue;
      }
      const std::string version = version_of(name);
      if (version.empty()) continue;  // not a cached analytic bundle
      const bool kept =
          version == kGeneratorVersion && name != version && (!current || name == *current);
      if (!kept) stale.push_back(dir.string());
    }
  }
  std::sort(stale.begin(), stale.end());
  return stale;
}

}  // namespace fleetsim
