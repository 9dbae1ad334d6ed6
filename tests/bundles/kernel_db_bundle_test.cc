#include "bundles/kernel_db_bundle.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "bundles/analytic_bundle.h"
#include "core/project_paths.h"
#include "engine/test_models.h"
#include "model/hardware.h"
#include "perf/bundle.h"
#include "perf/kernel_db/measured_kernels.h"
#include "perf/step_cost.h"
#include "support/input_error.h"
#include "support/shared_data.h"

namespace fleetsim {
namespace {

namespace fs = std::filesystem;
using testing::Card;

std::string Tables() {
  return (testing::SharedDataDir() / "profiles" / "aiconfigurator").string();
}

std::string ReadText(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The case: the 27B hybrid on H200, its GDN kernels from the measured GDN table.
TEST(KernelDbBundle, Builds27BOnH200WithMeasuredGdnKernels) {
  FLEETSIM_REQUIRE_SHARED_DATA();
  const fs::path dir = fs::temp_directory_path() / ("fleetsim-kdb-" + std::to_string(::getpid()));
  const HardwareSpec h200 = LoadHardware(HardwareCatalogDir(), "H200-SXM");
  WriteKernelDbBundle(Card("qwen3.8-27b"), h200, {1, 2, 4, 8}, Tables(), dir.string());
  const Bundle bundle = LoadBundle(dir.string());
  EXPECT_EQ(bundle.source, "kernel-db");
  EXPECT_EQ(bundle.TpDegrees(), (std::vector<int>{1, 2, 4, 8}));
  for (int tp : bundle.TpDegrees()) {
    EXPECT_NO_THROW(StepCostModel(Card("qwen3.8-27b"), bundle, tp,
                                  CollectiveModel(h200, tp, Dtype::kBfloat16), 0));
  }
  // meta.yaml names each kernel's origin.
  const std::string meta = ReadText(dir / "meta.yaml");
  for (const char* measured :
       {"gdn_conv_prefill: measured", "gdn_prefill: measured", "gdn_conv_decode: measured",
        "gdn_decode: measured", "o_proj: measured"}) {
    EXPECT_NE(meta.find(measured), std::string::npos) << measured;
  }
  for (const char* analytic : {"gdn_post_conv: analytic", "gdn_decode_mixed: analytic",
                               "attention: analytic", "layernorm: analytic"}) {
    EXPECT_NE(meta.find(analytic), std::string::npos) << analytic;
  }
  // A measured decode batch reads back as measured: the recurrent step at TP 1 (16 key and
  // 48 value heads per GPU) for 8 sequences.
  std::vector<MeasuredKernel> rows;
  ReadGdnTable(KernelFilesOf(Tables(), "h200_sxm").gdn, rows);
  double measured = -1;
  for (const MeasuredKernel& r : rows) {
    if (r.cls == KernelClass::kGdnDecode && r.gdn.batch == 8 && r.gdn.k_heads == 16 &&
        r.gdn.v_heads == 48 && r.gdn.head_k_dim == 128) {
      measured = r.measured_us;
    }
  }
  ASSERT_GT(measured, 0);
  EXPECT_NEAR(bundle.ForTp(1).linear_attention.at("gdn_decode").decode.Lookup({8}), measured, 1e-3);
  fs::remove_all(dir);
}

// The A100's tables are held out of the analytic fit, but a bundle may still use them: a
// dense model's projections come out measured where the GEMM table has their (n, k).
TEST(KernelDbBundle, BuildsADenseModelOnA100FromItsGemmTable) {
  FLEETSIM_REQUIRE_SHARED_DATA();
  const fs::path dir =
      fs::temp_directory_path() / ("fleetsim-kdb-a100-" + std::to_string(::getpid()));
  const HardwareSpec a100 = LoadHardware(HardwareCatalogDir(), "A100-SXM-80GB");
  WriteKernelDbBundle(Card("llama-3.1-8b"), a100, {1, 2, 8}, Tables(), dir.string());
  const Bundle bundle = LoadBundle(dir.string());
  EXPECT_EQ(bundle.source, "kernel-db");
  const std::string meta = ReadText(dir / "meta.yaml");
  EXPECT_NE(meta.find("tables: aiconfigurator/a100_sxm"), std::string::npos);
  EXPECT_NE(meta.find("o_proj: measured"), std::string::npos);
  EXPECT_NE(meta.find("attention: mixed"), std::string::npos);  // measured decodes (below)
  // At TP 1 o_proj is 4096 x 4096, measured at m = 64 among others.
  std::vector<MeasuredKernel> rows;
  ReadGemmTable(KernelFilesOf(Tables(), "a100_sxm").gemm, rows);
  double measured = -1;
  for (const MeasuredKernel& r : rows) {
    if (r.gemm.m == 64 && r.gemm.n == 4096 && r.gemm.k == 4096) measured = r.measured_us;
  }
  ASSERT_GT(measured, 0);
  EXPECT_NEAR(bundle.ForTp(1).dense.at("o_proj").Lookup({64}), measured, 1e-3);
  EXPECT_NO_THROW(StepCostModel(Card("llama-3.1-8b"), bundle, 2,
                                CollectiveModel(a100, 2, Dtype::kBfloat16), 0));
  // The table's one-sequence decode at TP 8 (4 query heads, 1 KV head) after 7 cached
  // tokens is a glitch, 44.6 us against 12.2 us after 15: fewer keys cannot cost more, so
  // the bundle takes the smaller value.
  std::vector<MeasuredKernel> decodes;
  ReadGenerationAttentionTable(KernelFilesOf(Tables(), "a100_sxm").generation_attention, decodes);
  const auto decode_us = [&](int64_t history) {
    for (const MeasuredKernel& r : decodes) {
      const AttentionKernelShape& a = r.attention;
      if (a.batch == 1 && a.history == history && a.q_heads == 4 && a.kv_heads == 1 &&
          a.head_dim == 128)
        return r.measured_us;
    }
    return -1.0;
  };
  ASSERT_GT(decode_us(7), 3 * decode_us(15));
  EXPECT_NEAR(bundle.ForTp(8).attention.decode.Lookup({1, 8}), decode_us(15), 1e-3);
  fs::remove_all(dir);
}

// The generation table's mean time at (batch, cached history) for Llama's TP 1 heads (32
// query, 8 KV heads of 128), or -1 where it has none.
double MeasuredDecodeUs(const std::vector<MeasuredKernel>& rows, int64_t batch, int64_t history) {
  double sum = 0;
  int count = 0;
  for (const MeasuredKernel& r : rows) {
    const AttentionKernelShape& a = r.attention;
    if (a.batch == batch && a.history == history && a.q_heads == 32 && a.kv_heads == 8 &&
        a.head_dim == 128) {
      sum += r.measured_us;
      ++count;
    }
  }
  return count == 0 ? -1.0 : sum / count;
}

// Decode-only attention comes from the generation table where it measured this TP's heads:
// keyed, like the bundle's kv_decode axis, by cached history (the table's 1,023 is 1,024
// keys), bilinear between its rows, and analytic outside them; the mixed and prefill rows
// are analytic throughout.
TEST(KernelDbBundle, DecodeAttentionIsMeasuredWhereTheTableHasTheHeads) {
  FLEETSIM_REQUIRE_SHARED_DATA();
  const fs::path dir =
      fs::temp_directory_path() / ("fleetsim-kdb-decode-" + std::to_string(::getpid()));
  const fs::path analytic_dir = dir.string() + "-analytic";
  const HardwareSpec h100 = LoadHardware(HardwareCatalogDir(), "H100-SXM");
  WriteKernelDbBundle(Card("llama-3.1-8b"), h100, {1}, Tables(), dir.string());
  WriteAnalyticBundle(Card("llama-3.1-8b"), h100, {1}, analytic_dir.string());
  const Bundle bundle = LoadBundle(dir.string());
  const Bundle analytic = LoadBundle(analytic_dir.string());
  EXPECT_NE(ReadText(dir / "meta.yaml").find("attention: mixed"), std::string::npos);

  std::vector<MeasuredKernel> rows;
  ReadGenerationAttentionTable(KernelFilesOf(Tables(), "h100_sxm").generation_attention, rows);
  const auto measured = [&](int64_t batch, int64_t history) {
    return MeasuredDecodeUs(rows, batch, history);
  };
  const double at_8 = measured(8, 1023), at_16 = measured(16, 1023);
  const double next_8 = measured(8, 2047), next_16 = measured(16, 2047);
  ASSERT_GT(at_8, 0);
  ASSERT_GT(at_16, 0);
  ASSERT_LE(at_8, next_8);  // so the cap leaves both alone
  ASSERT_LE(at_16, next_16);
  // The bundle's row at 1,024 cached tokens lies 1/1,024 of the way from 1,023 to 2,047.
  const auto at_1024 = [](double lo, double hi) { return lo + (hi - lo) / 1024; };
  const GridTable& decode = bundle.ForTp(1).attention.decode;
  EXPECT_NEAR(decode.Lookup({8, 1024}), at_1024(at_8, next_8), 1e-3);
  EXPECT_NEAR(decode.Lookup({12, 1024}), (at_1024(at_8, next_8) + at_1024(at_16, next_16)) / 2,
              1e-3);  // between batches
  // One cached token is a row of the table (two keys), not the analytic model's.
  ASSERT_GT(measured(8, 1), 0);
  EXPECT_NEAR(decode.Lookup({8, 1}), measured(8, 1), 1e-3);
  EXPECT_NE(decode.Lookup({8, 1}), analytic.ForTp(1).attention.decode.Lookup({8, 1}));
  // A cell with a corner the table lacks (1,024 sequences of 131,072 tokens do not fit the
  // GPU, so they were not timed) is analytic, not extrapolated.
  ASSERT_LT(measured(1024, 131071), 0);
  EXPECT_EQ(decode.Lookup({1024, 131072}),
            analytic.ForTp(1).attention.decode.Lookup({1024, 131072}));
  EXPECT_NE(decode.Lookup({8, 1024}), analytic.ForTp(1).attention.decode.Lookup({8, 1024}));
  EXPECT_EQ(bundle.ForTp(1).attention.mixed.Lookup({64, 0, 8, 1024}),
            analytic.ForTp(1).attention.mixed.Lookup({64, 0, 8, 1024}));
  fs::remove_all(dir);
  fs::remove_all(analytic_dir);
}

// The H200 generation table times every shape twice; the bundle takes the mean.
TEST(KernelDbBundle, ARepeatedDecodeMeasurementTakesTheMean) {
  FLEETSIM_REQUIRE_SHARED_DATA();
  const fs::path dir =
      fs::temp_directory_path() / ("fleetsim-kdb-h200-" + std::to_string(::getpid()));
  WriteKernelDbBundle(Card("llama-3.1-8b"), LoadHardware(HardwareCatalogDir(), "H200-SXM"), {1},
                      Tables(), dir.string());
  const Bundle bundle = LoadBundle(dir.string());
  std::vector<MeasuredKernel> rows;
  ReadGenerationAttentionTable(KernelFilesOf(Tables(), "h200_sxm").generation_attention, rows);
  const auto repeats = [&](int64_t history) {
    std::vector<double> out;
    for (const MeasuredKernel& r : rows) {
      const AttentionKernelShape& a = r.attention;
      if (a.batch == 8 && a.history == history && a.q_heads == 32 && a.kv_heads == 8 &&
          a.head_dim == 128)
        out.push_back(r.measured_us);
    }
    return out;
  };
  const std::vector<double> at = repeats(1023), next = repeats(2047);
  ASSERT_EQ(at.size(), 2u);
  ASSERT_EQ(next.size(), 2u);
  ASSERT_NE(at[0], at[1]);
  const double mean = (at[0] + at[1]) / 2, next_mean = (next[0] + next[1]) / 2;
  ASSERT_LE(mean, next_mean);  // the cap leaves both alone
  // The row at 1,024 cached tokens, 1/1,024 of the way from the table's 1,023 to 2,047.
  EXPECT_NEAR(bundle.ForTp(1).attention.decode.Lookup({8, 1024}), mean + (next_mean - mean) / 1024,
              1e-3);
  fs::remove_all(dir);
}

TEST(KernelDbBundle, OnlyGpusWithTablesAreAccepted) {
  const HardwareSpec rtx = LoadHardware(HardwareCatalogDir(), "RTX-4090");
  const InputError e = testing::CatchInputError([&] { KernelDbSystemOf(rtx); });
  EXPECT_EQ(e.field(), "--hardware");
  EXPECT_TRUE(testing::Mentions(e, "A100-SXM-80GB, H100-SXM and H200-SXM, not RTX-4090"));
  EXPECT_EQ(KernelDbSystemOf(LoadHardware(HardwareCatalogDir(), "A100-SXM-80GB")), "a100_sxm");
  EXPECT_EQ(KernelDbSystemOf(LoadHardware(HardwareCatalogDir(), "H100-SXM")), "h100_sxm");
  EXPECT_EQ(KernelDbSystemOf(LoadHardware(HardwareCatalogDir(), "H200-SXM")), "h200_sxm");
}

}  // namespace
}  // namespace fleetsim
