#include "bundles/analytic_bundle.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "core/input_error.h"
#include "core/project_paths.h"
#include "engine/engine_config.h"
#include "engine/kv_cache_layout.h"
#include "engine/test_models.h"
#include "model/hardware.h"
#include "perf/analytic_kernels.h"
#include "perf/bundle.h"
#include "perf/step_cost.h"

namespace fleetsim {
namespace {

namespace fs = std::filesystem;
using testing::Card;
using testing::SettingErrorFor;

HardwareSpec Gpu(const std::string& name) {
  return LoadHardware(HardwareCatalogDir(), name);
}

class ScratchDir {
 public:
  ScratchDir()
      : path_(fs::temp_directory_path() / ("fleetsim-analytic-" + std::to_string(::getpid()))) {
    fs::remove_all(path_);
  }
  ~ScratchDir() { fs::remove_all(path_); }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

TEST(AnalyticBundle, EveryShippedModelOnEveryCatalogGpuBuildsLoadsAndIsCovered) {
  ScratchDir scratch;
  for (const std::string& model : ModelCatalog(ModelsDir()).Names()) {
    for (const std::string& gpu : HardwareNames(HardwareCatalogDir())) {
      SCOPED_TRACE(model + " on " + gpu);
      const ModelCard& card = Card(model);
      const HardwareSpec hardware = Gpu(gpu);
      const std::vector<int> tps = DefaultTpDegrees(card, hardware);
      ASSERT_FALSE(tps.empty());
      const std::string dir = scratch / (model + "-" + gpu);
      WriteAnalyticBundle(card, hardware, tps, dir);
      const Bundle bundle = LoadBundle(dir);
      EXPECT_EQ(bundle.source, "analytic");
      EXPECT_EQ(bundle.TpDegrees(), tps);
      for (int tp : tps) {
        // The recorded block size is what `fleetsim inspect` resolves at this TP.
        EngineConfig config;
        config.tensor_parallel_size = tp;
        const KvCacheLayout layout = ResolveKvCacheLayout(
            card, ResolveEngineConfig(card, config, std::nullopt, SettingErrorFor),
            SettingErrorFor);
        EXPECT_EQ(bundle.engine_resolved.at(tp).block_size, layout.block_size) << "tp " << tp;
        // Covered: the step-cost model accepts it (it refuses a missing kernel).
        EXPECT_NO_THROW(StepCostModel(card, bundle, tp, CollectiveModel(), 0));
      }
    }
  }
}

// `fleetsim bundle build --out NAME` with a bare relative name: the staging folder and the
// rename must not depend on the path having a parent part.
TEST(AnalyticBundle, ARelativeOutputNameWorks) {
  ScratchDir scratch;
  fs::create_directories(scratch.path());
  const fs::path before = fs::current_path();
  fs::current_path(scratch.path());
  EXPECT_NO_THROW(WriteAnalyticBundle(Card("llama-3.1-8b"), Gpu("H100-SXM"), {1}, "bundle"));
  fs::current_path(before);
  EXPECT_TRUE(fs::exists(scratch.path() / "bundle" / "meta.yaml"));
  EXPECT_FALSE(fs::exists(scratch.path() / "bundle.tmp"));
}

// A TP the model cannot run names the setting, or what the caller's SettingError says
// (the CLI: --tp), and leaves nothing behind.
TEST(AnalyticBundle, ATpTheModelCannotRunNamesTheSetting) {
  ScratchDir scratch;
  const fs::path dir = scratch.path() / "b";
  try {
    WriteAnalyticBundle(Card("llama-3.1-8b"), Gpu("H100-SXM"), {3}, dir.string());
    ADD_FAILURE() << "TP 3 of 32 heads was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "tensor_parallel_size");
    EXPECT_EQ(std::string(e.what()).find("--tp"), std::string::npos) << e.what();
  }
  const SettingError cli = [](std::string_view setting, const std::string& message) {
    return OptionError("--tp", std::string(setting) + ": " + message);
  };
  try {
    WriteAnalyticBundle(Card("llama-3.1-8b"), Gpu("H100-SXM"), {1, 3}, dir.string(), cli);
    ADD_FAILURE() << "TP 3 of 32 heads was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "--tp");
  }
  EXPECT_FALSE(fs::exists(dir));
  EXPECT_FALSE(fs::exists(scratch.path() / "b.tmp"));
}

// meta.yaml names the catalog's measured rates a bundle was built with in place of the
// fitted fractions, and a card with none says nothing.
TEST(AnalyticBundle, MetaNamesTheMeasuredCardRatesItUsed) {
  ScratchDir scratch;
  WriteAnalyticBundle(Card("llama-3.1-8b"), Gpu("RTX-4090"), {1}, scratch / "rtx");
  WriteAnalyticBundle(Card("llama-3.1-8b"), Gpu("H100-SXM"), {1}, scratch / "h100");
  auto meta = [&](const std::string& name) {
    std::ifstream in(fs::path(scratch / name) / "meta.yaml");
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  };
  EXPECT_NE(
      meta("rtx").find(
          "card_rates: {memory_stream_efficiency: 0.977, matmul_achievable_flops: 1.785e+14}"),
      std::string::npos)
      << meta("rtx");
  EXPECT_EQ(meta("h100").find("card_rates"), std::string::npos) << meta("h100");
}

// A mixed step is one attention call, so the bundle carries its own mixed rows rather than
// leaving the step to add a prefill-only and a decode-only call. On FlashAttention 2 (RTX
// 4090) a decode beside a chunk loses its packed, split kernel and costs far more than
// alone; on FlashAttention 3 (H200) the mixed call saves the second launch.
TEST(AnalyticBundle, MixedStepsAreOneCallWithTheirOwnRows) {
  ScratchDir scratch;
  const ModelCard& card = Card("llama-3.1-8b");
  for (const char* gpu : {"RTX-4090", "H200-SXM"}) {
    SCOPED_TRACE(gpu);
    const HardwareSpec hardware = Gpu(gpu);
    const std::string dir = scratch / gpu;
    WriteAnalyticBundle(card, hardware, {1}, dir);
    const Bundle bundle = LoadBundle(dir);
    const AttentionTables& a = bundle.per_tp.at(1).attention;
    ASSERT_FALSE(a.mixed.empty());
    const AnalyticKernels k(card, hardware, 1);
    for (const auto& [chunk, history, n, kv] :
         {std::array<int64_t, 4>{16, 0, 1, 16384}, {512, 4096, 64, 2048}, {2048, 0, 256, 128}}) {
      // kv_decode is a decode's cached history; it attends to that and its own new token.
      const double row = a.mixed.Lookup({double(chunk), double(history), double(n), double(kv)});
      EXPECT_NEAR(row, k.AttentionMixedUs(chunk, history, n, kv + 1), 1e-3);
      EXPECT_NEAR(a.decode.Lookup({double(n), double(kv)}), k.AttentionDecodeUs(n, kv + 1), 1e-3);
      const double separate = a.prefill.Lookup({double(chunk), double(history)}) +
                              a.decode.Lookup({double(n), double(kv)});
      if (DefaultAttentionPlan(hardware.attention).backend.packs_gqa) {
        EXPECT_LT(row, separate);
      } else if (n == 1) {
        EXPECT_GT(row, 2 * separate);
      }
    }
  }
}

// A prompt's last chunk, the one token a full prefix hit leaves to compute and a decode
// of a one-token prompt are all steps a run makes: the tables hold them, not clamp them.
TEST(AnalyticBundle, TheSmallestStepsAreInsideTheGrid) {
  ScratchDir scratch;
  const ModelCard& card = Card("llama-3.1-8b");
  const HardwareSpec hardware = Gpu("H100-SXM");
  WriteAnalyticBundle(card, hardware, {1}, scratch / "b");
  const Bundle bundle = LoadBundle(scratch / "b");
  const BundleTables& t = bundle.ForTp(1);
  const AnalyticKernels k(card, hardware, 1);
  for (const auto& [chunk, history] : {std::array<double, 2>{1, 0}, {3, 100}, {12, 5000}}) {
    EXPECT_NEAR(t.attention.prefill.Lookup({chunk, history}),
                k.AttentionPrefillUs(int64_t(chunk), int64_t(history)), 0.05 * chunk + 1e-3)
        << chunk << " " << history;
  }
  for (const auto& [n, kv] : {std::array<double, 2>{1, 1}, {5, 7}, {1, 3}})
    t.attention.decode.Lookup({n, kv});
  for (const auto& p : {std::array<double, 4>{1, 0, 1, 1}, {2, 16, 3, 5}, {8, 0, 1, 12}})
    t.attention.mixed.Lookup({p[0], p[1], p[2], p[3]});
  t.dense.at("qkv_proj").Lookup({1});
  t.per_sequence.at("sampler").Lookup({1});
  EXPECT_EQ(t.attention.prefill.out_of_grid_lookups(), 0);
  EXPECT_EQ(t.attention.decode.out_of_grid_lookups(), 0);
  EXPECT_EQ(t.attention.mixed.out_of_grid_lookups(), 0);
  EXPECT_EQ(t.dense.at("qkv_proj").out_of_grid_lookups(), 0);
  EXPECT_EQ(t.per_sequence.at("sampler").out_of_grid_lookups(), 0);
}

TEST(AnalyticBundle, DefaultTpDegreesFitTheNodeAndDivideTheHeads) {
  EXPECT_EQ(DefaultTpDegrees(Card("qwen3.8-27b"), Gpu("H200-SXM")), (std::vector<int>{1, 2, 4, 8}));
  EXPECT_EQ(DefaultTpDegrees(Card("qwen3.8-27b"), Gpu("RX-7900-XT")), (std::vector<int>{1, 2, 4}));
}

TEST(AnalyticKernels, CostsGrowWithWork) {
  const AnalyticKernels k(Card("qwen3.8-27b"), Gpu("H200-SXM"), 1);
  for (const Kernel kernel : {Kernel::kQkvProj, Kernel::kOProj, Kernel::kGateUpProj,
                              Kernel::kDownProj, Kernel::kGdnInProj, Kernel::kLayernorm}) {
    SCOPED_TRACE(NameOf(kernel));
    double last = 0;
    for (int64_t t : {1, 16, 256, 4096, 16384}) {
      const double us = k.DenseUs(kernel, t).value();
      EXPECT_GE(us, last);
      last = us;
    }
  }
  EXPECT_LT(k.AttentionPrefillUs(1024, 0), k.AttentionPrefillUs(1024, 16384));
  EXPECT_LT(k.AttentionDecodeUs(8, 1024), k.AttentionDecodeUs(8, 65536));
  EXPECT_LT(k.DenseUs(Kernel::kQkvProj, 4096).value(), 1e6);
  EXPECT_FALSE(k.DenseUs(Kernel::kQkNormRope, 1));  // another profile's fused kernel
  EXPECT_FALSE(k.DenseUs(Kernel::kLmHead, 1));      // per_sequence.csv's
}

TEST(AnalyticKernels, LargeGemmsRunNearTheCalibratedFractionOfPeak) {
  const HardwareSpec h200 = Gpu("H200-SXM");
  const AnalyticKernels k(Card("qwen3.8-27b"), h200, 1);
  // down_proj at 16,384 tokens: 2 x 16384 x 5120 x 17408 flop.
  const double flops = 2.0 * 16384 * 5120 * 17408;
  const double achieved = flops / (k.DenseUs(Kernel::kDownProj, 16384).value() * 1e-6);
  const double peak = h200.peak_flops.at("bf16").value;
  EXPECT_GT(achieved / peak, 0.6);
  EXPECT_LT(achieved / peak, 0.8);
}

TEST(AnalyticKernels, OneDecodeLeavesALargeGpuIdleUnlessTheKvIsSplit) {
  // 4 KV heads on 132 SMs: one sequence keeps 4 SMs busy on a kernel without a split.
  const ModelCard& card = Card("qwen3.8-27b");
  const HardwareSpec h200 = Gpu("H200-SXM");
  AttentionPlan no_split = DefaultAttentionPlan(h200.attention);
  no_split.decode.grid = DecodeGrid::kPerSequenceHead;
  const AnalyticKernels unsplit(card, h200, 1, no_split, Quantization{});
  const AnalyticKernels split(card, Gpu("H200-SXM"), 1);
  const double per_token_single = unsplit.AttentionDecodeUs(1, 32768);
  const double per_token_batch = unsplit.AttentionDecodeUs(64, 32768) / 64;
  EXPECT_GT(per_token_single, 5 * per_token_batch);
  EXPECT_LT(split.AttentionDecodeUs(1, 32768), per_token_single / 5);
}

TEST(AnalyticKernels, GdnRegimeKernelsRunOnlyInTheirRegime) {
  const AnalyticKernels k(Card("qwen3.8-27b"), Gpu("H200-SXM"), 1);
  EXPECT_GT(k.GdnUs(Kernel::kGdnPrefill, 1024, 0).value(), 0);
  EXPECT_GT(k.GdnUs(Kernel::kGdnPrefill, 1024, 8).value(), 0);
  EXPECT_FALSE(k.GdnUs(Kernel::kGdnDecode, 1024, 8));  // not in a mixed step
  EXPECT_GT(k.GdnUs(Kernel::kGdnDecodeMixed, 1024, 8).value(), 0);
  EXPECT_FALSE(k.GdnUs(Kernel::kGdnDecodeMixed, 0, 8));  // not in a decode-only step
  EXPECT_GT(k.GdnUs(Kernel::kGdnDecode, 0, 8).value(), 0);
  EXPECT_FALSE(k.GdnUs(Kernel::kGdnConvPrefill, 0, 8));
  EXPECT_FALSE(k.GdnUs(Kernel::kGdnCore, 64, 8));  // the packed operator is not modelled
  // The recurrent decode moves each sequence's fp32 state twice: it grows with sequences.
  EXPECT_LT(k.GdnUs(Kernel::kGdnDecode, 0, 1).value(), k.GdnUs(Kernel::kGdnDecode, 0, 256).value());
}

// meta.yaml names, per TP, the attention backend and decode kernel its attention table
// prices and why; where the weights do not fit the GPU it says so with the shortfall, never
// a negative KV budget (the 27B in bf16 on 20 GB cards: 51.0 GiB of weights at TP 1, 25.5
// GiB per rank at TP 2, 12.7 GiB at TP 4 against 17.99 GiB usable).
TEST(AnalyticBundle, MetaNamesTheDecodeKernelAndNeverANegativeKvBudget) {
  ScratchDir scratch;
  WriteAnalyticBundle(Card("qwen3.8-27b"), Gpu("RX-7900-XT"), {1, 2, 4}, scratch / "b");
  const std::string meta = [&] {
    std::ifstream in(scratch.path() / "b" / "meta.yaml");
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }();
  EXPECT_EQ(meta.find("kv_cache_bytes: -"), std::string::npos) << meta;
  const YAML::Node per_tp = YAML::Load(meta)["engine_resolved"]["per_tp"];
  for (int tp : {1, 2}) {
    EXPECT_FALSE(per_tp[tp]["kv_cache_bytes"]) << tp;
    EXPECT_NE(per_tp[tp]["weights_do_not_fit"].as<std::string>().find("GiB short"),
              std::string::npos);
  }
  EXPECT_GT(per_tp[4]["kv_cache_bytes"].as<int64_t>(), 0);
  for (int tp : {1, 2, 4}) {
    EXPECT_EQ(per_tp[tp]["attention_backend"].as<std::string>(), "ROCM_ATTN");
    EXPECT_EQ(per_tp[tp]["decode_kernel"].as<std::string>(), "triton_paged_attention_2d");
    EXPECT_NE(per_tp[tp]["attention_why"].as<std::string>().find("head size 256 is not 128"),
              std::string::npos);
  }
  const Bundle bundle = LoadBundle(scratch / "b");
  EXPECT_EQ(bundle.engine_resolved.at(2).decode_kernel, "triton_paged_attention_2d");
}

// A group's engine settings that change its kernels build their own cached bundle: the
// hybrid pinned to the split-KV kernel decodes a 32K context far faster (2 programs of
// 32,769 x 1,024 B each at 27.5 GB/s per program, 1,220 us, against 32 programs that stream
// both heads' 67.1 MB at the card's streaming rate, about 110 us with the reduce: over 8x).
TEST(AnalyticBundle, AGroupsPinBuildsItsOwnCachedBundle) {
  ScratchDir scratch;
  const ModelCard card = Card("qwen3.8-27b-awq");
  const HardwareSpec gpu = Gpu("RX-7900-XT");
  EngineConfig pinned;
  pinned.decode_kernel = "triton_paged_attention_2d_splitkv";
  EXPECT_NE(AnalyticCacheFolder(card, gpu, pinned), AnalyticCacheFolder(card, gpu));
  EXPECT_EQ(BundleEngineKey(pinned), "decode_kernel=triton_paged_attention_2d_splitkv\n");
  EXPECT_EQ(BundleEngineKey(EngineConfig{}), "");
  ::setenv("FLEETSIM_CACHE", scratch.path().c_str(), 1);
  const std::string stock = CachedAnalyticBundle(card, gpu);
  const std::string split = CachedAnalyticBundle(card, gpu, pinned);
  ::unsetenv("FLEETSIM_CACHE");
  ASSERT_NE(stock, split);
  const double at32k_stock = LoadBundle(stock, 2).ForTp(2).attention.decode.Lookup({1, 32768});
  const double at32k_split = LoadBundle(split, 2).ForTp(2).attention.decode.Lookup({1, 32768});
  EXPECT_GT(at32k_stock / at32k_split, 8);
  EXPECT_EQ(LoadBundle(split, 2).engine_resolved.at(2).decode_kernel,
            "triton_paged_attention_2d_splitkv");
}

TEST(AnalyticBundle, CachedBundleIsBuiltOnceAndRebuiltWhenStale) {
  ScratchDir scratch;
  ::setenv("FLEETSIM_CACHE", scratch.path().c_str(), 1);
  const std::string dir = CachedAnalyticBundle(Card("llama-3.1-8b"), Gpu("RTX-4090"));
  ::unsetenv("FLEETSIM_CACHE");
  EXPECT_TRUE(fs::exists(fs::path(dir) / "meta.yaml"));
  const auto built = fs::last_write_time(fs::path(dir) / "meta.yaml");
  ::setenv("FLEETSIM_CACHE", scratch.path().c_str(), 1);
  EXPECT_EQ(CachedAnalyticBundle(Card("llama-3.1-8b"), Gpu("RTX-4090")), dir);
  EXPECT_EQ(fs::last_write_time(fs::path(dir) / "meta.yaml"), built);  // reused
  std::ofstream(fs::path(dir) / "meta.yaml") << "source: {kind: analytic, generator: old}\n";
  CachedAnalyticBundle(Card("llama-3.1-8b"), Gpu("RTX-4090"));
  ::unsetenv("FLEETSIM_CACHE");
  EXPECT_EQ(LoadBundle(dir).TpDegrees(), (std::vector<int>{1, 2, 4, 8}));  // rebuilt
}

// Editing the model's config.json or the GPU's catalog entry must not reuse a bundle of the
// old figures: the cache folder's name carries a fingerprint of both files.
TEST(AnalyticBundle, EditedInputsGetTheirOwnCacheFolder) {
  ScratchDir scratch;
  const ModelCard card = Card("llama-3.1-8b");
  const HardwareSpec gpu = Gpu("RTX-4090");
  const std::string folder = AnalyticCacheFolder(card, gpu);
  EXPECT_EQ(folder.rfind(std::string(AnalyticGeneratorVersion()) + "-", 0), 0u) << folder;
  EXPECT_EQ(folder.size(), std::string(AnalyticGeneratorVersion()).size() + 17);
  EXPECT_EQ(AnalyticCacheFolder(card, gpu), folder);  // the same files, the same name

  const auto edited_copy = [&](const std::string& from, const std::string& name) {
    std::ifstream in(from);
    std::stringstream text;
    text << in.rdbuf() << "\n";  // a trailing newline: any byte counts
    const fs::path to = scratch.path() / name;
    std::ofstream(to) << text.str();
    return to.string();
  };
  HardwareSpec edited_gpu = gpu;
  edited_gpu.file = edited_copy(gpu.file, "RTX-4090.yaml");
  ModelCard edited_card = card;
  edited_card.config_path = edited_copy(card.config_path, "config.json");
  EXPECT_NE(AnalyticCacheFolder(card, edited_gpu), folder);
  EXPECT_NE(AnalyticCacheFolder(edited_card, gpu), folder);
  EXPECT_NE(AnalyticCacheFolder(edited_card, gpu), AnalyticCacheFolder(card, edited_gpu));

  ::setenv("FLEETSIM_CACHE", scratch.path().c_str(), 1);
  const std::string dir = CachedAnalyticBundle(card, gpu);
  const std::string edited_dir = CachedAnalyticBundle(card, edited_gpu);
  ::unsetenv("FLEETSIM_CACHE");
  EXPECT_EQ(fs::path(dir).filename().string(), folder);
  EXPECT_NE(edited_dir, dir);
  EXPECT_TRUE(fs::exists(fs::path(edited_dir) / "meta.yaml"));
}

// `fleetsim bundle prune-cache` lists only what no current build reads: other generator
// versions, inputs since edited, and staging folders an interrupted build left an hour ago
// or more.
TEST(AnalyticBundle, StaleCachedBundlesAreOnlyOtherGeneratorsAndAbandonedBuilds) {
  ScratchDir scratch;
  const fs::path hw = scratch.path() / "bundles" / "llama-3.1-8b" / "H100-SXM";
  const std::string version = AnalyticGeneratorVersion();
  const std::string current = AnalyticCacheFolder(Card("llama-3.1-8b"), Gpu("H100-SXM"));
  const std::string edited = version + "-0123456789abcdef";    // another config.json or entry
  const std::string settings = version + "-fedcba9876543210";  // a group's other settings
  for (const std::string& name :
       {current, edited, settings, version, std::string("analytic-1"),
        std::string("analytic-1.tmp.42"), current + ".tmp.43", std::string("analytic-x"),
        std::string("analytic-8-zz"), std::string("kernel-db"), std::string("tp1")}) {
    fs::create_directories(hw / name);
    std::ofstream(hw / name / "meta.yaml") << "x\n";
  }
  // Bundles of today's inputs record them (any engine settings); the edited one does not.
  const std::string inputs = AnalyticInputsFingerprint(Card("llama-3.1-8b"), Gpu("H100-SXM"));
  for (const std::string& name : {current, settings})
    std::ofstream(hw / name / "meta.yaml") << "x\ninputs_fingerprint: " << inputs << "\n";
  std::ofstream(hw / edited / "meta.yaml") << "x\ninputs_fingerprint: 0000000000000000\n";
  // An interrupted build of an hour ago; the other staging folder is fresh (in progress).
  fs::last_write_time(hw / "analytic-1.tmp.42",
                      fs::file_time_type::clock::now() - std::chrono::hours(2));
  // A model the catalog does not know (a card given as a config.json path): every folder
  // of the current version is kept, since which one it reads cannot be told.
  const fs::path own = scratch.path() / "bundles" / "my-model" / "H100-SXM";
  for (const std::string& name : {edited, std::string("analytic-1")}) {
    fs::create_directories(own / name);
    std::ofstream(own / name / "meta.yaml") << "x\n";
  }
  ::setenv("FLEETSIM_CACHE", scratch.path().c_str(), 1);
  const std::vector<std::string> stale = StaleCachedBundles();
  ::unsetenv("FLEETSIM_CACHE");
  std::vector<std::string> expected{(hw / "analytic-1").string(),
                                    (hw / "analytic-1.tmp.42").string(), (hw / version).string(),
                                    (hw / edited).string(), (own / "analytic-1").string()};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(stale, expected);
}

}  // namespace
}  // namespace fleetsim
