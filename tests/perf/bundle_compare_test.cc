#include "perf/bundle_compare.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "core/input_error.h"
#include "core/project_paths.h"
#include "model/model_catalog.h"
#include "perf/step_cost.h"
#include "perf/synthetic_bundle.h"
#include "support/input_error.h"
#include "support/run_command.h"

namespace fleetsim {
namespace {

namespace fs = std::filesystem;
using testing::SyntheticBundle;

// Multiplies every time_us of one table file by `factor`.
void Scale(const std::string& file, double factor) {
  std::ifstream in(file);
  std::string header, line, out;
  std::getline(in, header);
  out = header + "\n";
  while (std::getline(in, line)) {
    const auto comma = line.rfind(',');
    std::ostringstream value;
    value << std::stod(line.substr(comma + 1)) * factor;
    out += line.substr(0, comma + 1) + value.str() + "\n";
  }
  std::ofstream(file) << out;
}

TEST(BundleCompare, ABundleAgainstItselfHasNoError) {
  SyntheticBundle b;
  testing::WriteHybridBundle(b, {1});
  const Bundle bundle = LoadBundle(b.dir());
  const BundleComparison c = CompareBundles(bundle, bundle);
  ASSERT_FALSE(c.kinds.empty());
  for (const KernelError& e : c.kernels) {
    EXPECT_GT(e.cells, 0) << e.kernel;
    EXPECT_NEAR(e.mape, 0, 1e-12) << e.kernel;
  }
  EXPECT_TRUE(c.only_in_reference.empty());
}

TEST(BundleCompare, MeasuresAScaledKernelExactlyAndNamesWhatIsMissing) {
  SyntheticBundle reference, candidate;
  testing::WriteHybridBundle(reference, {1});
  testing::WriteHybridBundle(candidate, {1});
  Scale(candidate.dir() + "/tp1/per_sequence.csv", 1.1);
  const BundleComparison c =
      CompareBundles(LoadBundle(candidate.dir()), LoadBundle(reference.dir()));
  for (const KernelError& e : c.kernels) {
    if (e.kind == "per_sequence") {
      EXPECT_NEAR(e.mape, 0.10, 1e-6) << e.kernel;
      EXPECT_NEAR(e.bias, 0.10, 1e-6) << e.kernel;
    } else {
      EXPECT_NEAR(e.mape, 0, 1e-9) << e.kernel;
    }
  }
  // A candidate without GDN kernels: named as missing, not silently skipped.
  SyntheticBundle dense;
  testing::WriteDenseBundle(dense);
  const BundleComparison d = CompareBundles(LoadBundle(dense.dir()), LoadBundle(reference.dir()));
  EXPECT_FALSE(d.only_in_reference.empty());
}

// lm_head at 100 + s us and the sampler at (5 + s / 2) x sampler_scale us, at 1 and 256
// sequences.
void WritePerSequence(const SyntheticBundle& b, double sampler_scale) {
  std::ofstream out(b.dir() + "/tp1/per_sequence.csv");
  out << "layer,sequences,time_us\n";
  for (int s : {1, 256}) {
    out << "lm_head," << s << ',' << 100 + s << '\n';
    out << "sampler," << s << ',' << (5 + 0.5 * s) * sampler_scale << '\n';
  }
}

// The summed row weighs a kernel by its time: the small sampler 2x too slow is half of the
// per-cell MAPE but only its share of the per_sequence total.
TEST(BundleCompare, TheSummedRowWeighsKernelsByTheirTime) {
  SyntheticBundle reference, candidate;
  testing::WriteHybridBundle(reference, {1});
  testing::WriteHybridBundle(candidate, {1});
  WritePerSequence(reference, 1.0);
  WritePerSequence(candidate, 2.0);
  const BundleComparison c =
      CompareBundles(LoadBundle(candidate.dir()), LoadBundle(reference.dir()));
  const KernelError* all = nullptr;
  const KernelError* sum = nullptr;
  for (const KernelError& e : c.kinds) {
    if (e.kind == "per_sequence") (e.kernel == "sum" ? sum : all) = &e;
    if (e.kind == "dense") {
      EXPECT_NEAR(e.mape, 0, 1e-12) << e.kernel;
    }
  }
  ASSERT_NE(all, nullptr);
  ASSERT_NE(sum, nullptr);
  EXPECT_EQ(all->cells, 4);
  EXPECT_NEAR(all->mape, 0.5, 1e-9);
  // At 1 sequence: 5.5 of 106.5 us; at 256: 133 of 489 us.
  EXPECT_EQ(sum->cells, 2);
  EXPECT_NEAR(sum->mape, (5.5 / 106.5 + 133.0 / 489.0) / 2, 1e-9);
  EXPECT_NEAR(sum->bias, sum->mape, 1e-12);
  ASSERT_FALSE(sum->worst.empty());
  EXPECT_EQ(sum->worst[0].where, "(sequences=256)");
  EXPECT_NEAR(sum->worst[0].candidate_us, 356 + 266, 1e-9);
}

TEST(Coverage, ReportsPerBlockAndRegimeAndFindsWhatIsMissing) {
  const ModelCard card = ModelCatalog(ModelsDir()).Load("qwen3.8-27b");
  SyntheticBundle hybrid, dense;
  testing::WriteHybridBundle(hybrid, {1});
  testing::WriteDenseBundle(dense);
  auto missing = [&](const std::string& dir) {
    std::vector<std::string> out;
    for (const CoverageRow& row : Coverage(card, LoadBundle(dir).ForTp(1))) {
      if (row.required && !row.covered)
        out.push_back(row.block + "/" + row.regime + "/" + row.kernel);
    }
    return out;
  };
  EXPECT_TRUE(missing(hybrid.dir()).empty());
  const auto gaps = missing(dense.dir());
  EXPECT_NE(std::find(gaps.begin(), gaps.end(), "linear_attention/all/gdn_in_proj"), gaps.end());
  EXPECT_NE(std::find(gaps.begin(), gaps.end(), "linear_attention/decode/(any regime kernel)"),
            gaps.end());
  // The CLI refuses it in one line, exit 2.
  const auto r = testing::RunFleetsim("bundle coverage " + dense.dir() + " --model qwen3.8-27b");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("tp1/dense.csv gdn_in_proj (linear_attention)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("tp1/linear_attention.csv (any regime kernel) (linear_attention, decode)"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(
      testing::RunFleetsim("bundle coverage " + hybrid.dir() + " --model qwen3.8-27b").exit_code,
      0);
}

// Rope and the q/k norm inside Qwen3.5's fused kernel count as covered, and say where.
TEST(Coverage, NamesTheFusedKernelThatCarriesAKernel) {
  const ModelCard card = ModelCatalog(ModelsDir()).Load("qwen3.8-27b");
  SyntheticBundle fused;
  testing::WriteHybridBundle(fused, {1});
  fused.Dense(1, {"embedding", "final_layernorm", "layernorm", "qkv_proj", "qk_norm_rope", "o_proj",
                  "gdn_in_proj", "gdn_glue", "gdn_norm", "gdn_out_proj", "gate_up_proj", "act_fn",
                  "down_proj"});
  int carried = 0;
  for (const CoverageRow& row : Coverage(card, LoadBundle(fused.dir()).ForTp(1))) {
    EXPECT_TRUE(row.covered || !row.required) << row.kernel;
    if (row.kernel == "rotary_emb" || row.kernel == "qk_norm") {
      EXPECT_TRUE(row.required && row.covered) << row.kernel;
      EXPECT_EQ(row.fused_into, "qk_norm_rope") << row.kernel;
      ++carried;
    }
  }
  EXPECT_EQ(carried, 2);
  const auto r = testing::RunFleetsim("bundle coverage " + fused.dir() + " --model qwen3.8-27b");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("rotary_emb             covered (in qk_norm_rope)"), std::string::npos)
      << r.out;
}

TEST(Coverage, PackedAndHistoricalGdnLayoutsAreNeverMixed) {
  SyntheticBundle b;
  testing::WriteHybridBundle(b, {1});
  b.Append("tp1/linear_attention.csv", "gdn_core,64,0,5");
  const InputError e = testing::CatchInputError([&] { LoadBundle(b.dir()); });
  EXPECT_EQ(e.field(), "gdn_core");
}

}  // namespace
}  // namespace fleetsim
