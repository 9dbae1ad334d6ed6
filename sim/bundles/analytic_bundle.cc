#include "bundles/analytic_bundle.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string_view>
#include <unistd.h>
#include <utility>

#include <yaml-cpp/yaml.h>

#include "bundles/analytic_skew.h"
#include "core/format.h"
#include "core/hash64.h"
#include "core/input_error.h"
#include "core/project_paths.h"
#include "core/text_file.h"
#include "engine/engine_config.h"
#include "engine/engine_setup.h"
#include "engine/kv_cache_layout.h"
#include "model/cache_shapes.h"
#include "model/hardware.h"
#include "model/model_catalog.h"
#include "model/weight_count.h"
#include "perf/analytic_kernels.h"
#include "perf/bundle_format.h"
#include "perf/layer_kernels.h"

namespace fleetsim {
namespace {

namespace fs = std::filesystem;

// Bumped whenever the kernel model or the grids change, so cached bundles are rebuilt.
constexpr const char* kGeneratorVersion = "analytic-15";

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

// A fingerprint of the model's config.json and the GPU's catalog file, as read now.
uint64_t InputsHash(const ModelCard& card, const HardwareSpec& hardware) {
  uint64_t hash = 0;
  for (const std::string& path : {card.config_path, hardware.file}) {
    const std::string bytes = ReadTextFile(path);
    hash = Mix64(hash ^ bytes.size());
    for (const char c : bytes)
      hash = Mix64(hash ^ static_cast<unsigned char>(c));
  }
  return hash;
}

constexpr const char* kInputsKey = "inputs_fingerprint";

std::string Us(double us) {
  return Fixed(us, 4);
}

// The dense.csv kernels the card's layer kinds charge, once each, in Kernel order.
std::vector<Kernel> DenseKernels(const ModelCard& card) {
  std::set<Kernel> kernels;
  for (const LayerKind kind : kLayerKinds) {
    if (LayerCount(card, kind) == 0) continue;
    for (const KernelSpec& spec : KernelsOf(kind)) {
      if (FileOf(spec.kernel) == BundleFile::kDense) kernels.insert(spec.kernel);
    }
  }
  return {kernels.begin(), kernels.end()};
}

// The kernels of `kind` that `file` holds, in the kind's order.
std::vector<Kernel> KernelsIn(LayerKind kind, BundleFile file) {
  std::vector<Kernel> kernels;
  for (const KernelSpec& spec : KernelsOf(kind)) {
    if (FileOf(spec.kernel) == file) kernels.push_back(spec.kernel);
  }
  return kernels;
}

// Where each kernel's rows came from: every row measured, none, or some.
class Origins {
 public:
  void Note(Kernel kernel, bool measured) { (measured ? measured_ : analytic_).insert(kernel); }
  // By kernel name.
  std::map<std::string, std::string> ByKernel() const {
    std::map<std::string, std::string> out;
    for (const Kernel k : analytic_)
      out[std::string(NameOf(k))] = measured_.contains(k) ? "mixed" : "analytic";
    for (const Kernel k : measured_) {
      if (!analytic_.contains(k)) out[std::string(NameOf(k))] = "measured";
    }
    return out;
  }

 private:
  std::set<Kernel> measured_, analytic_;
};

// A table's file, its header line written.
std::ofstream OpenTable(const fs::path& dir, BundleFile file) {
  std::ofstream out(dir / FileName(file));
  out << HeaderLine(file);
  return out;
}

// Writes one TP's tables; returns the skew table's alpha_default (nullopt without
// attention layers).
std::optional<double> WriteTp(const ModelCard& card, const HardwareSpec& hardware, int tp,
                              const fs::path& dir, const KernelOverrides* overrides,
                              Origins& origins, const AttentionPlan& attention,
                              const Quantization& quantization) {
  fs::create_directories(dir);
  const AnalyticKernels k(card, hardware, tp, attention, quantization);
  // The analytic value, or the measured one where the overrides have it (its origin
  // noted); nullopt where the analytic model has no such kernel.
  const auto price = [&](Kernel kernel, std::optional<double> analytic,
                         const auto& measured) -> std::optional<double> {
    if (!analytic) return std::nullopt;
    const std::optional<double> m = overrides == nullptr ? std::nullopt : measured();
    origins.Note(kernel, m.has_value());
    return m ? *m : *analytic;
  };
  std::optional<double> skew_alpha_default;
  const std::vector<int64_t> tokens = Grid(1, 16384);
  {
    std::ofstream out = OpenTable(dir, BundleFile::kDense);
    for (const Kernel kernel : DenseKernels(card)) {
      for (int64_t t : tokens) {
        const std::optional<double> us =
            price(kernel, k.DenseUs(kernel, t), [&] { return overrides->DenseUs(kernel, t); });
        if (us) out << NameOf(kernel) << ',' << t << ',' << Us(*us) << '\n';
      }
    }
  }
  {
    std::ofstream out = OpenTable(dir, BundleFile::kPerSequence);
    for (const Kernel kernel : KernelsIn(LayerKind::kHead, BundleFile::kPerSequence)) {
      for (int64_t s : Grid(1, 4096)) {
        const std::optional<double> us = price(kernel, k.PerSequenceUs(kernel, s),
                                               [&] { return overrides->PerSequenceUs(kernel, s); });
        if (us) out << NameOf(kernel) << ',' << s << ',' << Us(*us) << '\n';
      }
    }
  }
  if (LayerCount(card, LayerKind::kFullAttention) > 0) {
    // Legacy layout: prefill-only, decode-only and mixed rows. A mixed step is one call
    // (one launch; on FlashAttention 2 its decodes lose their packing and split), so it
    // is not the sum of the other two. Its four axes go in powers of two, as measured
    // bundles do, to keep the table small.
    std::ofstream out = OpenTable(dir, BundleFile::kAttention);
    const int64_t max_len = card.max_position_embeddings;
    std::vector<int64_t> kvs = Grid(16, max_len);
    kvs.insert(kvs.begin(), 0);
    origins.Note(Kernel::kAttention, false);
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
        const double us = *price(Kernel::kAttention, k.AttentionDecodeUs(n, kv + 1),
                                 [&] { return overrides->AttentionDecodeUs(n, kv); });
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
    skew_alpha_default = WriteAnalyticSkewFit(k, max_len, dir);
  }
  if (LayerCount(card, LayerKind::kLinearAttention) > 0) {
    std::ofstream out = OpenTable(dir, BundleFile::kLinearAttention);
    std::vector<int64_t> prefill{0};
    for (int64_t t : Grid(1, 256))
      prefill.push_back(64 * t);  // whole 64-token scan chunks
    std::vector<int64_t> decodes = Grid(1, 2048);
    decodes.insert(decodes.begin(), 0);
    for (const Kernel kernel :
         KernelsIn(LayerKind::kLinearAttention, BundleFile::kLinearAttention)) {
      for (int64_t t : prefill) {
        for (int64_t n : decodes) {
          if (t == 0 && n == 0) continue;
          const std::optional<double> us =
              price(kernel, k.GdnUs(kernel, t, n), [&] { return overrides->GdnUs(kernel, t, n); });
          if (us) out << NameOf(kernel) << ',' << t << ',' << n << ',' << Us(*us) << '\n';
        }
      }
    }
  }
  if (card.moe) {
    std::ofstream out = OpenTable(dir, BundleFile::kMoe);
    origins.Note(Kernel::kMoe, false);
    const int64_t experts = card.moe->num_experts;
    for (int64_t t : tokens) {
      for (int64_t a : Grid(card.moe->experts_per_token, experts)) {
        if (a > t * card.moe->experts_per_token) continue;  // unreachable
        out << t << ',' << a << ',' << Us(k.MoeUs(t, a)) << '\n';
      }
    }
  }
  return skew_alpha_default;
}

// A setting's error where the caller gave no SettingError: the setting, named.
InputError NamedSettingError(std::string_view setting, const std::string& message) {
  return InputError("", 0, std::string(setting), message);
}

// The catalog's measured rates that replaced fitted fractions in the analytic kernels
// (KernelRoofline), so that meta.yaml says what the bundle was built from; empty if none.
std::vector<std::pair<const char*, double>> CardRates(const HardwareSpec& hardware) {
  std::vector<std::pair<const char*, double>> rates;
  for (const auto& [key, rate] :
       {std::pair{"memory_stream_efficiency", &hardware.memory_stream_efficiency},
        std::pair{"matmul_achievable_flops", &hardware.matmul_achievable_flops}}) {
    if (*rate) rates.emplace_back(key, (*rate)->value);
  }
  return rates;
}

// The bundle replaces `dir` whole, so `dir` must not hold anything else: a folder of the
// user's files, or the cache folder that holds the generated bundles.
void RequireReplaceable(const fs::path& dir) {
  if (!fs::exists(dir)) return;
  if (!fs::is_directory(dir)) throw InputError(dir.string(), 0, "", "exists and is not a folder");
  if (fs::is_empty(dir)) return;
  std::ifstream meta(dir / kMetaFile);
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
                         const std::vector<int>& tps, const std::string& dir,
                         const SettingError& error, const EngineConfig& engine) {
  BundleRecipe recipe;
  recipe.source = {{"kind", "analytic"},
                   {"tool", "fleetsim"},
                   {"generator", kGeneratorVersion},
                   {"model", "roofline+occupancy"},
                   {"calibrated",
                    "h100+h200 kernel tables; empty FA2 tile: RTX PRO 6000 Qwen3-32B "
                    "attention table"}};
  WriteBundle(card, hardware, tps, dir, recipe, error, engine);
}

std::string BundleEngineKey(const EngineConfig& engine) {
  using namespace engine_settings;
  const EngineConfig defaults;
  std::string key;
  const auto add = [&](std::string_view name, const std::string& value,
                       const std::string& fallback) {
    if (value != fallback) key += std::string(name) + "=" + value + "\n";
  };
  const auto optional = [](const auto& value) {
    return value ? std::to_string(*value) : std::string();
  };
  add(kBlockSize.key(), optional(engine.block_size), "");
  add(kEnablePrefixCaching.key(),
      engine.enable_prefix_caching ? (*engine.enable_prefix_caching ? "true" : "false") : "", "");
  add(kNumSpeculativeTokens.key(), std::to_string(engine.num_speculative_tokens),
      std::to_string(defaults.num_speculative_tokens));
  add(kMaxModelLen.key(), optional(engine.max_model_len), "");
  add(kKvCacheDtype.key(), engine.kv_cache_dtype, defaults.kv_cache_dtype);
  add(kMambaCacheDtype.key(), engine.mamba_cache_dtype, defaults.mamba_cache_dtype);
  add(kMambaSsmCacheDtype.key(), engine.mamba_ssm_cache_dtype, defaults.mamba_ssm_cache_dtype);
  add(kAttentionBackend.key(), engine.attention_backend, defaults.attention_backend);
  add(kDecodeKernel.key(), engine.decode_kernel, defaults.decode_kernel);
  add(kQuantization.key(), engine.quantization, defaults.quantization);
  add(kQuantizationGroupSize.key(), std::to_string(engine.quantization_group_size),
      std::to_string(defaults.quantization_group_size));
  return key;
}

namespace {

// What meta.yaml's engine_resolved.per_tp says of one TP degree.
struct ResolvedTp {
  int tp = 0;
  KvCacheLayout layout;
  int max_num_batched_tokens = 0;
  int64_t kv_cache_bytes = 0;
  std::string weights_do_not_fit;  // why there is no KV budget, when there is none
  std::string quantization;
};

// meta.yaml after its first line (the header): one key a line, per-TP entries and the
// source as flow maps.
std::string MetaYaml(const ModelCard& card, const HardwareSpec& hardware,
                     const std::vector<int>& tps, const BundleRecipe& recipe,
                     const EngineConfig& engine, const std::vector<ResolvedTp>& resolved,
                     const std::map<int, std::map<std::string, std::string>>& kernel_origins,
                     const std::map<int, double>& skew_alpha_default) {
  YAML::Emitter out;
  out.SetDoublePrecision(6);
  out << YAML::BeginMap;
  out << YAML::Key << meta_key::kModel << YAML::Value << card.name;
  out << YAML::Key << meta_key::kHardware << YAML::Value << hardware.name;
  // What `bundle prune-cache` compares a cached bundle's inputs against.
  out << YAML::Key << kInputsKey << YAML::Value << Hex64(InputsHash(card, hardware));
  out << YAML::Key << meta_key::kSource << YAML::Value << YAML::Flow << YAML::BeginMap;
  for (const auto& [key, value] : recipe.source)
    out << YAML::Key << key << YAML::Value << value;
  out << YAML::EndMap;
  if (const auto rates = CardRates(hardware); !rates.empty()) {
    out << YAML::Key << meta_key::kCardRates << YAML::Value << YAML::Flow << YAML::BeginMap;
    for (const auto& [key, rate] : rates)
      out << YAML::Key << key << YAML::Value << rate;
    out << YAML::EndMap
        << YAML::Comment("measured, from the catalog, in place of fitted fractions");
  }
  out << YAML::Key << meta_key::kGdnLayout << YAML::Value << "historical";
  out << YAML::Key << meta_key::kTpDegrees << YAML::Value << YAML::Flow << tps;
  if (const std::string key = BundleEngineKey(engine); !key.empty()) {
    out << YAML::Key << "engine" << YAML::Value << YAML::Flow << YAML::BeginMap;
    std::size_t start = 0;
    while (start < key.size()) {
      const std::size_t end = key.find('\n', start);
      const std::string line = key.substr(start, end - start);
      const std::size_t eq = line.find('=');
      out << YAML::Key << line.substr(0, eq) << YAML::Value << line.substr(eq + 1);
      start = end + 1;
    }
    out << YAML::EndMap << YAML::Comment("the instance group's settings it was built for");
  }
  out << YAML::Key << meta_key::kEngineResolved << YAML::Value << YAML::BeginMap;
  out << YAML::Key << meta_key::kPerTp << YAML::Value << YAML::BeginMap;
  for (const ResolvedTp& r : resolved) {
    out << YAML::Key << r.tp << YAML::Value << YAML::Flow << YAML::BeginMap;
    out << YAML::Key << meta_key::kBlockSize << YAML::Value << r.layout.block_size;
    out << YAML::Key << meta_key::kAttnPageBytesPerToken << YAML::Value
        << r.layout.attn_bytes_per_token_per_layer;
    out << YAML::Key << meta_key::kMambaPageBytes << YAML::Value << r.layout.mamba_page_bytes;
    out << YAML::Key << meta_key::kMambaPagePaddedBytes << YAML::Value
        << r.layout.mamba_page_padded_bytes;
    out << YAML::Key << meta_key::kMaxNumBatchedTokens << YAML::Value << r.max_num_batched_tokens;
    // Never a negative budget: weights that do not fit say so, with the shortfall.
    if (r.weights_do_not_fit.empty()) {
      out << YAML::Key << meta_key::kKvCacheBytes << YAML::Value << r.kv_cache_bytes;
    } else {
      out << YAML::Key << meta_key::kWeightsDoNotFit << YAML::Value << r.weights_do_not_fit;
    }
    out << YAML::Key << meta_key::kQuantization << YAML::Value << r.quantization;
    if (r.layout.attention) {
      const AttentionPlan& a = *r.layout.attention;
      out << YAML::Key << meta_key::kAttentionBackend << YAML::Value << a.backend.name;
      out << YAML::Key << meta_key::kDecodeKernel << YAML::Value << a.decode.name;
      out << YAML::Key << meta_key::kAttentionWhy << YAML::Value
          << a.backend.name + ": " + a.backend_why + ". " + a.decode.name + ": " + a.decode_why;
    }
    out << YAML::EndMap;
  }
  out << YAML::EndMap << YAML::EndMap;
  out << YAML::Key << meta_key::kKernelOrigin << YAML::Value << YAML::BeginMap;
  for (const auto& [tp, kernels] : kernel_origins) {
    out << YAML::Key << tp << YAML::Value << YAML::Flow << YAML::BeginMap;
    for (const auto& [kernel, origin] : kernels)
      out << YAML::Key << kernel << YAML::Value << origin;
    out << YAML::EndMap;
  }
  out << YAML::EndMap;
  if (!skew_alpha_default.empty()) {
    // LLMServingSim's skew_fit block (perf/skew_fit.h), its alphas from the analytic kernel.
    const SkewFit& axes = AnalyticSkewAxes();
    out << YAML::Key << meta_key::kSkewFit << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "enabled" << YAML::Value << true;
    out << YAML::Key << "bucket_axes" << YAML::Value << YAML::BeginMap;
    for (const auto& [name, axis] :
         {std::pair{"n", &axes.n}, std::pair{"skew_rate", &axes.skew_rate},
          std::pair{"kv_big", &axes.kv_big}, std::pair{"kp", &axes.kp}}) {
      out << YAML::Key << std::string(name) + "_bins" << YAML::Value << YAML::Flow << axis->bins;
      out << YAML::Key << std::string(name) + "_labels" << YAML::Value << YAML::Flow
          << axis->labels;
    }
    out << YAML::EndMap;
    out << YAML::Key << meta_key::kPerTp << YAML::Value << YAML::BeginMap;
    for (const auto& [tp, alpha] : skew_alpha_default) {
      out << YAML::Key << tp << YAML::Value << YAML::Flow << YAML::BeginMap;
      out << YAML::Key << "method" << YAML::Value << "analytic";
      out << YAML::Key << "alpha_default" << YAML::Value << alpha;
      out << YAML::EndMap;
    }
    out << YAML::EndMap << YAML::EndMap;
  }
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace

void WriteBundle(const ModelCard& card, const HardwareSpec& hardware, const std::vector<int>& tps,
                 const std::string& dir, const BundleRecipe& recipe, const SettingError& error,
                 const EngineConfig& engine) {
  const SettingError& setting_error = error ? error : SettingError(NamedSettingError);
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
  std::vector<ResolvedTp> resolved;
  std::map<int, std::map<std::string, std::string>> kernel_origins;
  std::map<int, double> skew_alpha_default;
  for (int tp : tps) {
    EngineConfig config = engine;
    config.tensor_parallel_size = tp;
    const ResolvedEngineConfig resolved_engine =
        ResolveEngineConfig(card, config, hardware.UsableMemoryBytes(), setting_error);
    const KvCacheLayout layout =
        ResolveKvCacheLayout(card, resolved_engine, setting_error, &hardware);
    // What a run with these settings on this GPU would have at the default utilization
    // (meta.yaml records it), or why it has no KV budget at all.
    KvBudget budget;
    const int64_t weights =
        CountWeights(card, tp, resolved_engine.quantization, resolved_engine.speculative.enabled())
            .bytes_per_rank;
    ResolvedTp entry{
        tp,
        layout,
        resolved_engine.max_num_batched_tokens,
        KvBytesFromMemory(hardware.UsableMemoryBytes(), budget.gpu_memory_utilization, weights),
        "",
        resolved_engine.quantization.Describe()};
    if (entry.kv_cache_bytes <= 0) {
      entry.weights_do_not_fit = WeightsDoNotFit(hardware, budget, tp, weights);
      entry.kv_cache_bytes = 0;
    }
    resolved.push_back(entry);
    const std::unique_ptr<KernelOverrides> overrides =
        recipe.overrides ? recipe.overrides(tp) : nullptr;
    Origins origins;
    if (const std::optional<double> alpha =
            WriteTp(card, hardware, tp, staging / TpFolder(tp), overrides.get(), origins,
                    *layout.attention, resolved_engine.quantization)) {
      skew_alpha_default[tp] = *alpha;
    }
    kernel_origins[tp] = origins.ByKernel();
  }
  std::ofstream meta(staging / kMetaFile);
  meta << kMetaHeader
       << (recipe.overrides ? " from measured kernel tables where they have the shape, else" : "")
       << " from its analytic kernel model.\n"
       << MetaYaml(card, hardware, tps, recipe, engine, resolved, kernel_origins,
                   skew_alpha_default);
  meta.close();
  fs::remove_all(target);
  fs::create_directories(target.parent_path());
  fs::rename(staging, target);
  cleanup.keep = true;
}

// The fingerprint covers the files the bundle is computed from, so that editing either one
// builds a new folder instead of reusing the old figures' bundle.
std::string AnalyticInputsFingerprint(const ModelCard& card, const HardwareSpec& hardware) {
  return Hex64(InputsHash(card, hardware));
}

std::string AnalyticCacheFolder(const ModelCard& card, const HardwareSpec& hardware,
                                const EngineConfig& engine) {
  uint64_t hash = InputsHash(card, hardware);
  // vLLM's defaults add nothing, so a default group's folder depends on the files alone.
  if (const std::string key = BundleEngineKey(engine); !key.empty()) {
    hash = Mix64(hash ^ key.size());
    for (const char c : key)
      hash = Mix64(hash ^ static_cast<unsigned char>(c));
  }
  return std::string(kGeneratorVersion) + "-" + Hex64(hash);
}

namespace {

// The default TP degrees at which these settings resolve (a pin, a quantized layout or the
// block arithmetic can rule one out; a group at such a TP gets the refusal from its own
// engine, naming its line).
std::vector<int> ResolvableTpDegrees(const ModelCard& card, const HardwareSpec& hardware,
                                     const EngineConfig& engine) {
  std::vector<int> tps;
  for (int tp : DefaultTpDegrees(card, hardware)) {
    EngineConfig config = engine;
    config.tensor_parallel_size = tp;
    try {
      const SettingError error = NamedSettingError;
      const ResolvedEngineConfig resolved =
          ResolveEngineConfig(card, config, hardware.UsableMemoryBytes(), error);
      ResolveKvCacheLayout(card, resolved, error, &hardware);
      tps.push_back(tp);
    } catch (const InputError&) {
    }
  }
  return tps;
}

}  // namespace

std::string CachedAnalyticBundle(const ModelCard& card, const HardwareSpec& hardware,
                                 const EngineConfig& engine) {
  // One folder per generator version and inputs: a bundle is never replaced in place, so a
  // process reading one (another rank, a sweep point, a Slurm array task) never sees it
  // vanish.
  const fs::path dir = CacheRoot() / "bundles" / card.name / hardware.name /
                       AnalyticCacheFolder(card, hardware, engine);
  if (ReadTextFile(dir / kMetaFile).find(std::string("generator: ") + kGeneratorVersion + ",") ==
      std::string::npos) {
    // Built aside and renamed into place, so that processes starting together never read
    // a half-written bundle.
    const fs::path staging =
        dir.parent_path() / (dir.filename().string() + ".tmp." + std::to_string(::getpid()));
    try {
      fs::remove_all(staging);
      fs::create_directories(staging.parent_path());
    } catch (const fs::filesystem_error& error) {
      // A cache this user cannot write (another user's home, a read-only one).
      throw InputError(dir.string(), 0, "",
                       std::string("cannot build the analytic bundle into the cache: ") +
                           error.code().message() +
                           " (set FLEETSIM_CACHE or XDG_CACHE_HOME to a writable folder)");
    }
    WriteAnalyticBundle(card, hardware, ResolvableTpDegrees(card, hardware, engine),
                        staging.string(), {}, engine);
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
  // The <model>/<hardware> folders of the cache: <cache>/bundles/<m>/<h>.
  std::vector<std::pair<fs::path, std::string>> hardware_dirs;  // and their model's name
  std::error_code error;
  auto children = [&](const fs::path& dir) {
    std::vector<fs::path> out;
    for (const auto& entry : fs::directory_iterator(dir, error)) {
      if (entry.is_directory(error)) out.push_back(entry.path());
    }
    return out;
  };
  for (const fs::path& model : children(CacheRoot() / "bundles")) {
    for (const fs::path& hw : children(model))
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
  // The fingerprint of this model's and GPU's files as they are now; nullopt when either is
  // unknown here (a card given as a config.json path elsewhere): then every folder of the
  // current version is kept. A folder is current when its meta.yaml records these inputs
  // (folders of other engine settings of the same inputs are current too).
  auto current_inputs = [](const std::string& model,
                           const std::string& gpu) -> std::optional<std::string> {
    try {
      return Hex64(InputsHash(ModelCatalog(ModelsDir()).Load(model),
                              LoadHardware(HardwareCatalogDir(), gpu)));
    } catch (const InputError&) {
      return std::nullopt;
    }
  };
  auto built_from = [](const fs::path& dir) {
    const std::string meta = ReadTextFile(dir / kMetaFile);
    const std::string key = std::string("\n") + kInputsKey + ": ";
    const auto at = meta.find(key);
    return at == std::string::npos ? std::string() : meta.substr(at + key.size(), 16);
  };
  const auto an_hour_ago = fs::file_time_type::clock::now() - std::chrono::hours(1);
  std::vector<std::string> stale;
  for (const auto& [hw, model] : hardware_dirs) {
    const std::optional<std::string> current = current_inputs(model, hw.filename().string());
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
      const bool kept = version == kGeneratorVersion && name != version &&
                        (!current || built_from(dir) == *current);
      if (!kept) stale.push_back(dir.string());
    }
  }
  std::sort(stale.begin(), stale.end());
  return stale;
}

}  // namespace fleetsim
