#include "perf/bundle_format.h"

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "perf/layer_kernels.h"

namespace fleetsim {
namespace {

constexpr std::string_view kBegin = "<!-- bundle-format: begin";
constexpr std::string_view kEnd = "<!-- bundle-format: end -->";

TEST(BundleFormat, DocsListTheFilesColumnsAndKernelsOfTheHeader) {
  std::ifstream in(std::string(FLEETSIM_SOURCE_DIR) + "/docs/BUNDLES.md");
  ASSERT_TRUE(in) << "docs/BUNDLES.md";
  std::stringstream text;
  text << in.rdbuf();
  const std::string doc = text.str();
  const auto begin = doc.find(kBegin);
  ASSERT_NE(begin, std::string::npos) << "docs/BUNDLES.md has no '" << kBegin << "' marker";
  const auto body = doc.find('\n', begin) + 1;
  const auto end = doc.find(kEnd, body);
  ASSERT_NE(end, std::string::npos) << "docs/BUNDLES.md has no '" << kEnd << "' marker";
  EXPECT_EQ(doc.substr(body, end - body), BundleFormatMarkdown())
      << "docs/BUNDLES.md's format section is not BundleFormatMarkdown(); paste this between "
         "the markers:\n"
      << BundleFormatMarkdown();
}

TEST(BundleFormat, EveryKernelNameParsesBackAndIsUnique) {
  std::set<std::string_view> names;
  for (const Kernel kernel : AllKernels()) {
    EXPECT_EQ(KernelNamed(NameOf(kernel)), kernel) << NameOf(kernel);
    EXPECT_TRUE(names.insert(NameOf(kernel)).second) << NameOf(kernel);
  }
  EXPECT_FALSE(KernelNamed("no_such_kernel"));
}

TEST(BundleFormat, RegimeKernelsAreTheAttentionAndGdnOnes) {
  for (const Kernel kernel : AllKernels()) {
    const BundleFile file = FileOf(kernel);
    EXPECT_EQ(IsRegimeKernel(kernel),
              file == BundleFile::kAttention || file == BundleFile::kLinearAttention)
        << NameOf(kernel);
  }
  EXPECT_TRUE(RunsIn(Kernel::kGdnPrefill, Regime::kMixed));
  EXPECT_FALSE(RunsIn(Kernel::kGdnDecode, Regime::kMixed));
  EXPECT_TRUE(RunsIn(Kernel::kLayernorm, Regime::kDecode));  // regime-free
  EXPECT_EQ(RegimeOf(true, true), Regime::kMixed);
  EXPECT_EQ(RegimeOf(false, true), Regime::kDecode);
}

TEST(BundleFormat, HeaderLinesAndTpFolders) {
  EXPECT_EQ(HeaderLine(BundleFile::kDense), "layer,tokens,time_us\n");
  EXPECT_EQ(HeaderLine(BundleFile::kAttention),
            "prefill_chunk,kv_prefill,n_decode,kv_decode,time_us\n");
  EXPECT_EQ(TpFolder(4), "tp4");
  EXPECT_EQ(TpOfFolder("tp16"), 16);
  EXPECT_FALSE(TpOfFolder("tp"));
  EXPECT_FALSE(TpOfFolder("tp2x"));
  EXPECT_FALSE(TpOfFolder("bundles"));
}

}  // namespace
}  // namespace fleetsim
