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
    EXPECT_NO_THROW(
        StepCostModel(Card("qwen3.8-27b"), bundle, tp, AllReduceModel{tp, 450e9, 1e-6}, 0));
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
  WriteKernelDbBundle(Card("llama-3.1-8b"), a100, {1, 2}, Tables(), dir.string());
  const Bundle bundle = LoadBundle(dir.string());
  EXPECT_EQ(bundle.source, "kernel-db");
  const std::string meta = ReadText(dir / "meta.yaml");
  EXPECT_NE(meta.find("tables: aiconfigurator/a100_sxm"), std::string::npos);
  EXPECT_NE(meta.find("o_proj: measured"), std::string::npos);
  EXPECT_NE(meta.find("attention: analytic"), std::string::npos);
  // At TP 1 o_proj is 4096 x 4096, measured at m = 64 among others.
  std::vector<MeasuredKernel> rows;
  ReadGemmTable(KernelFilesOf(Tables(), "a100_sxm").gemm, rows);
  double measured = -1;
  for (const MeasuredKernel& r : rows) {
    if (r.gemm.m == 64 && r.gemm.n == 4096 && r.gemm.k == 4096) measured = r.measured_us;
  }
  ASSERT_GT(measured, 0);
  EXPECT_NEAR(bundle.ForTp(1).dense.at("o_proj").Lookup({64}), measured, 1e-3);
  EXPECT_NO_THROW(
      StepCostModel(Card("llama-3.1-8b"), bundle, 2, AllReduceModel{2, 300e9, 1e-6}, 0));
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
