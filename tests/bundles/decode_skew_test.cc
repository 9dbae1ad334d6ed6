// Decode skew: a batch of decodes with mixed contexts costs more than the same batch at
// its mean context. The bundle's correction (perf/skew_fit.h, LLMServingSim's format and
// rule) and the analytic kernel's own (perf/analytic_kernels.h), with values by hand.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

#include <gtest/gtest.h>

#include "bundles/analytic_skew.h"
#include "core/project_paths.h"
#include "model/hardware.h"
#include "model/model_catalog.h"
#include "perf/analytic_kernels.h"
#include "perf/bundle.h"
#include "perf/skew_fit.h"
#include "perf/step_cost.h"
#include "perf/synthetic_bundle.h"
#include "support/shared_data.h"

namespace fleetsim {
namespace {

using testing::SyntheticBundle;

const ModelCard& Llama() {
  static const ModelCard card = ModelCatalog(ModelsDir()).Load("llama-3.1-8b");
  return card;
}

// A Llama bundle of the synthetic formulas at TP 1, with `meta` after its first lines.
void WriteLlamaBundle(SyntheticBundle& files, const std::string& meta) {
  files.Meta("model: llama-3.1-8b\nhardware: H100-SXM\nsource: {kind: measured}\n" + meta);
  files.Dense(1, {"embedding", "final_layernorm", "layernorm", "qkv_proj", "rotary_emb", "o_proj",
                  "gate_up_proj", "act_fn", "down_proj"});
  files.PerSequence(1);
  files.Attention(1);
}

BatchShape Decodes(const std::vector<int64_t>& contexts) {
  BatchShape batch;
  for (const int64_t c : contexts)
    batch.AddDecode(c);
  return batch;
}

TEST(SkewFit, BucketLabelsAsLlmServingSimBuildsThem) {
  const SkewFit axes = DefaultSkewAxes();
  // (bins[i], bins[i + 1]]: 8 is "n<=8", 9 "n<=16"; past the last edge, the last label.
  EXPECT_EQ(axes.n.LabelOf(8), "n<=8");
  EXPECT_EQ(axes.n.LabelOf(9), "n<=16");
  EXPECT_EQ(axes.n.LabelOf(5'000'000), "n>128");
  EXPECT_EQ(axes.skew_rate.LabelOf(0), "sr<=5%");
  EXPECT_EQ(axes.skew_rate.LabelOf(0.4), "sr<=40%");
  EXPECT_EQ(axes.kp.LabelOf(0), "kp=0");
  EXPECT_EQ(axes.kp.LabelOf(1), "kp<=2k");
  EXPECT_EQ(SkewFit::Key(0, "n<=4", "sr<=40%", "kvB<=4k", "kp=0"),
            "pc=0|n<=4|sr<=40%|kvB<=4k|kp=0");
}

// A row's labels become the bucket Alpha finds: 32 decodes at skew rate 0.25, longest
// context 4096, no prefill is "n<=32|sr<=40%|kvB<=4k|kp=0"; one more decode is "n<=64",
// which has no row (the default). A label on no axis sets nothing.
TEST(SkewFit, ARowsLabelsAreTheBucketAlphaFinds) {
  SkewFit fit = DefaultSkewAxes();
  fit.alpha_default = 0.125;
  EXPECT_TRUE(fit.SetAlpha(0, "n<=32", "sr<=40%", "kvB<=4k", "kp=0", 0.5));
  EXPECT_FALSE(fit.SetAlpha(0, "n<=33", "sr<=40%", "kvB<=4k", "kp=0", 0.75));
  EXPECT_EQ(fit.Alpha(0, 32, 0.25, 4096, 0), 0.5);
  EXPECT_EQ(fit.Alpha(0, 33, 0.25, 4096, 0), 0.125);
  EXPECT_EQ(fit.Alpha(512, 32, 0.25, 4096, 0), 0.125);  // the prefill chunk matched exactly
  EXPECT_EQ(fit.alpha_by_bucket.size(), 1u);
}

// Contexts 1000, 1000, 1000, 4000: floored mean 1750, skew rate (1750 - 1000) / 3000 =
// 0.25, the "pc=0|n<=4|sr<=40%|kvB<=4k|kp=0" bucket, alpha 0.5 there. Decode attention
// (0.1 n + 0.0001 n kv) at the mean: 0.4 + 0.7 = 1.1 us; at the longest: 0.4 + 1.6 = 2.0;
// corrected: 1.1 + 0.5 x 0.9 = 1.55 us, 0.45 us more in each of 32 layers.
TEST(StepCost, SkewedDecodesMoveTowardTheLongestContext) {
  SyntheticBundle files;
  WriteLlamaBundle(files, "skew_fit:\n  enabled: true\n  per_tp:\n    1: {alpha_default: 0.1}\n");
  files.Append("tp1/skew_fit.csv",
               "pc,n_label,skew_rate_label,kv_big_label,kp_label,alpha,n_samples");
  files.Append("tp1/skew_fit.csv", "0,n<=4,sr<=40%,kvB<=4k,kp=0,0.5,4");
  const Bundle bundle = LoadBundle(files.dir());
  ASSERT_TRUE(bundle.ForTp(1).skew.has_value());
  const StepCostModel model(Llama(), bundle, 1, CollectiveModel(), 0);
  // The same tables without the correction.
  SyntheticBundle plain_files;
  WriteLlamaBundle(plain_files, "");
  const Bundle plain_bundle = LoadBundle(plain_files.dir());
  const StepCostModel plain(Llama(), plain_bundle, 1, CollectiveModel(), 0);
  const BatchShape skewed = Decodes({1000, 1000, 1000, 4000});
  EXPECT_NEAR(static_cast<double>(model.Cost(skewed).compute_ns - plain.Cost(skewed).compute_ns),
              32 * 0.45 * 1000, 1);
  // At the mean, uniform: the tables' own value (the skewed batch without correction).
  EXPECT_EQ(plain.Cost(skewed).compute_ns,
            plain.Cost(Decodes({1750, 1750, 1750, 1750})).compute_ns);
  // A bucket the table lacks ("n<=8") takes alpha_default: six decodes, five at 100 and one
  // at 20,000: mean 3,416.7; t_mean = 0.6 + 0.0006 x 3416.7; t_max = 0.6 + 0.0006 x 20000.
  const BatchShape six = Decodes({100, 100, 100, 100, 100, 20000});
  const double t_mean = 0.6 + 0.0006 * 20500.0 / 6;
  const double t_max = 0.6 + 0.0006 * 20000;
  EXPECT_NEAR(static_cast<double>(model.Cost(six).compute_ns - plain.Cost(six).compute_ns),
              32 * 0.1 * (t_max - t_mean) * 1000, 1);
  // Equal contexts, or one decode: no correction.
  EXPECT_EQ(model.Cost(Decodes({4000, 4000})).compute_ns,
            plain.Cost(Decodes({4000, 4000})).compute_ns);
  EXPECT_EQ(model.Cost(Decodes({4000})).compute_ns, plain.Cost(Decodes({4000})).compute_ns);
}

TEST(StepCost, NoSkewBlockNoCorrection) {
  SyntheticBundle files;
  WriteLlamaBundle(files, "");
  const Bundle bundle = LoadBundle(files.dir());
  EXPECT_FALSE(bundle.ForTp(1).skew.has_value());
  const StepCostModel model(Llama(), bundle, 1, CollectiveModel(), 0);
  EXPECT_EQ(model.Cost(Decodes({1000, 1000, 1000, 4000})).compute_ns,
            model.Cost(Decodes({1750, 1750, 1750, 1750})).compute_ns);
}

// The published bundles' tables load: the RTX PRO 6000 Llama bundle's TP 1 table and its
// pooled alpha (meta.yaml: alpha_default 0.0543).
TEST(SkewFit, ReadsThePublishedBundle) {
  FLEETSIM_REQUIRE_SHARED_DATA();
  const std::string dir = (ProjectRoot() / ".." / "shared" / "data" / "profiles" / "llmservingsim" /
                           "perf" / "RTXPRO6000" / "meta-llama" / "Llama-3.1-8B" / "bf16")
                              .string();
  const Bundle bundle = LoadBundle(dir, 1);
  ASSERT_TRUE(bundle.ForTp(1).skew.has_value());
  const SkewFit& fit = *bundle.ForTp(1).skew;
  EXPECT_DOUBLE_EQ(fit.alpha_default, 0.0543);
  // Its first row: "0,n<=128,sr<=15%,kvB<=16k,kp=0,0.0328,4".
  EXPECT_DOUBLE_EQ(fit.Alpha(0, 100, 0.10, 8000, 0), 0.0328);
  EXPECT_EQ(fit.n.labels.back(), "n>256");
}

// The analytic decode: with uniform contexts the longest-context argument changes nothing;
// a long sequence among short ones outlasts the rest when the work items do not fill the
// GPU, and costs nothing extra when they do.
TEST(AnalyticSkew, ALongSequenceOutlastsTheShortOnes) {
  const HardwareSpec h100 = LoadHardware(HardwareCatalogDir(), "H100-SXM");
  const KernelRoofline r(h100, Dtype::kBfloat16);
  // Llama-3.1-8B at TP 1: 32 query heads, 8 KV heads, head dim 128.
  EXPECT_DOUBLE_EQ(r.AttentionDecodeUs(4, 2000, 32, 8, 128),
                   r.AttentionDecodeUs(4, 2000, 32, 8, 128, 2000));
  // 4 decodes x 8 KV heads = 32 items; splits from the longest (16,000 / 255 -> 63, capped
  // at ceil(132 / 32) = 5): the longest split walks 16,000 / 5 keys, the mean's 2,000 x 4 x 8
  // keys spread over 132 SMs -- 3,200 x 132 > 64,000: the long split sets the time.
  const double skewed = r.AttentionDecodeUs(4, 5000, 32, 8, 128, 16000);
  const double uniform = r.AttentionDecodeUs(4, 5000, 32, 8, 128);
  const double at_longest = r.AttentionDecodeUs(4, 16000, 32, 8, 128);
  EXPECT_GT(skewed, uniform);
  EXPECT_LT(skewed, at_longest);
  // 1,024 decodes fill the GPU many times over: the skew costs nothing.
  EXPECT_DOUBLE_EQ(r.AttentionDecodeUs(1024, 2000, 32, 8, 128, 4000),
                   r.AttentionDecodeUs(1024, 2000, 32, 8, 128));
}

// The analytic bundle's skew table: LLMServingSim's format, every alpha from the kernel.
TEST(AnalyticSkew, WritesTheTableInLlmServingSimsFormat) {
  const HardwareSpec rtx = LoadHardware(HardwareCatalogDir(), "RTX-4090");
  const AnalyticKernels k(Llama(), rtx, 1);
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("fleetsim-skew-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const double alpha_default = WriteAnalyticSkewFit(k, 32768, dir);
  std::ifstream in(dir / "skew_fit.csv");
  std::string header, line;
  std::getline(in, header);
  EXPECT_EQ(header, "pc,n_label,skew_rate_label,kv_big_label,kp_label,alpha,n_samples");
  int rows = 0;
  bool found = false;
  while (std::getline(in, line)) {
    ++rows;
    if (line.rfind("0,n<=4,sr<=40%,kvB<=4k,kp=0,", 0) == 0) found = true;
  }
  // pc 0: 9 n x 5 rates x 4 contexts; pc 16..2048 (8): the same x 7 prefill histories.
  EXPECT_EQ(rows, 9 * 5 * 4 + 8 * 9 * 5 * 4 * 7);
  EXPECT_TRUE(found);
  EXPECT_TRUE(std::isfinite(alpha_default));
  // The bucket's alpha as the kernel gives it: n 4, one decode at 4,096 and three at 1,024
  // (rate .275 -> round(1.1) = 1), mean 1,792.
  const double skewed = k.AttentionDecodeUs(4, 1793, 4097);
  const double at_mean = k.AttentionDecodeUs(4, 1793, 1793);
  const double at_longest = k.AttentionDecodeUs(4, 4097, 4097);
  std::ifstream again(dir / "skew_fit.csv");
  while (std::getline(again, line)) {
    if (line.rfind("0,n<=4,sr<=40%,kvB<=4k,kp=0,", 0) != 0) continue;
    const double alpha = std::stod(line.substr(std::string("0,n<=4,sr<=40%,kvB<=4k,kp=0,").size()));
    EXPECT_NEAR(alpha, (skewed - at_mean) / (at_longest - at_mean), 1e-4);
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace fleetsim
