#include "model/hardware.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "core/input_error.h"
#include "core/project_paths.h"
#include "support/input_error.h"
#include "support/temp_file.h"

namespace fleetsim {
namespace {

using testing::CatchInputError;
using testing::Mentions;
using testing::TempFile;

// A complete, valid catalog entry named X. `omit` drops one top-level section; `block_sizes`
// replaces the attention backend's kernel block sizes.
std::string CatalogYaml(const std::string& omit = "",
                        const std::string& block_sizes = "[16, 32, 64]") {
  const std::vector<std::pair<std::string, std::string>> sections{
      {"name", "name: X\n"},
      {"vendor", "vendor: nvidia\n"},
      {"product", "product: x\n"},
      {"memory_bytes", "memory_bytes: {value: 1e9, source: s}\n"},
      {"memory_bandwidth_bytes_per_s", "memory_bandwidth_bytes_per_s: {value: 1e12, source: s}\n"},
      {"peak_flops", "peak_flops:\n  bf16: {value: 1e14, source: s}\n"},
      {"compute_units", "compute_units: {value: 100, kind: SM, source: s}\n"},
      {"l2_cache_bytes", "l2_cache_bytes: {value: 1e6, source: s}\n"},
      {"node",
       "node:\n"
       "  gpus_per_node: {value: 8, source: s}\n"
       "  intra_node: {kind: nvlink4, topology: switch, bandwidth_bytes_per_s: {value: 1e11, "
       "source: s}, latency_s: {value: 1e-6, source: s}}\n"
       "  inter_node: {kind: ib, bandwidth_bytes_per_s: {value: 1e10, source: s}, latency_s: "
       "{value: 1e-6, source: s}}\n"},
      {"attention_backend",
       "attention_backend:\n"
       "  name: FLASH_ATTN\n"
       "  supported_block_sizes: {value: " +
           block_sizes +
           ", source: s}\n"
           "  split_kv_decode: {value: true, source: s}\n"
           "  query_tile: {rows: 64, packs_gqa: false, source: s}\n"},
      {"price_per_gpu_hour_usd", "price_per_gpu_hour_usd: {value: 2.5, source: s}\n"},
  };
  std::string yaml;
  for (const auto& [key, text] : sections) {
    if (key != omit) yaml += text;
  }
  return yaml;
}

// The 1-based line on which `text` first appears in `yaml`.
int LineOf(const std::string& yaml, const std::string& text) {
  const std::string before = yaml.substr(0, yaml.find(text));
  return 1 + static_cast<int>(std::count(before.begin(), before.end(), '\n'));
}

TEST(Hardware, CatalogHoldsTheFirstEightGpus) {
  const std::vector<std::string> expected{"A100-SXM-80GB", "B200",      "H100-SXM",
                                          "H200-SXM",      "MI300X",    "RTX-4090",
                                          "RTX-PRO-6000",  "RX-7900-XT"};
  EXPECT_EQ(HardwareNames(HardwareCatalogDir()), expected);
}

TEST(Hardware, EveryEntryLoadsWithSourcedPositiveFigures) {
  for (const std::string& name : HardwareNames(HardwareCatalogDir())) {
    SCOPED_TRACE(name);
    const HardwareSpec spec = LoadHardware(HardwareCatalogDir(), name);
    EXPECT_EQ(spec.name, name);
    EXPECT_TRUE(spec.vendor == "nvidia" || spec.vendor == "amd");
    for (const SourcedValue* v :
         {&spec.memory_bytes, &spec.memory_bandwidth_bytes_per_s, &spec.compute_units,
          &spec.l2_cache_bytes, &spec.gpus_per_node, &spec.intra_node.bandwidth_bytes_per_s,
          &spec.intra_node.latency_s, &spec.inter_node.bandwidth_bytes_per_s,
          &spec.inter_node.latency_s}) {
      EXPECT_GT(v->value, 0);
      EXPECT_FALSE(v->source.empty());
    }
    EXPECT_TRUE(spec.peak_flops.contains("bf16") || spec.peak_flops.contains("fp16"));
    // The driver-visible total is never above what the datasheet says the card has.
    EXPECT_LE(spec.UsableMemoryBytes(), static_cast<int64_t>(spec.memory_bytes.value));
    // Tensor parallelism stays inside a node: a node holds at least one TP-8 group or less.
    EXPECT_GE(spec.gpus_per_node.value, 1);
  }
}

TEST(Hardware, EveryEntryNamesItsAttentionBackendAndPrice) {
  for (const std::string& name : HardwareNames(HardwareCatalogDir())) {
    SCOPED_TRACE(name);
    const HardwareSpec spec = LoadHardware(HardwareCatalogDir(), name);
    const AttentionBackendSpec& backend = spec.attention_backend;
    EXPECT_FALSE(backend.name.empty());
    const std::vector<int>& sizes = backend.supported_block_sizes;
    ASSERT_FALSE(sizes.empty());
    EXPECT_TRUE(std::is_sorted(sizes.begin(), sizes.end()));
    EXPECT_TRUE(std::all_of(sizes.begin(), sizes.end(), [](int size) { return size > 0; }));
    // FlashAttention, FlashInfer and vLLM's ROCm backends all align hybrid blocks to 16.
    EXPECT_EQ(sizes.front(), 16);
    EXPECT_FALSE(backend.block_sizes_source.empty());
    EXPECT_FALSE(backend.split_kv_source.empty());
    EXPECT_GT(backend.query_tile_rows, 0);
    EXPECT_FALSE(backend.query_tile_source.empty());
    EXPECT_GT(spec.price_per_gpu_hour_usd.value, 0);
    EXPECT_FALSE(spec.price_per_gpu_hour_usd.source.empty());
  }
}

TEST(Hardware, DefaultAttentionBackends) {
  EXPECT_EQ(LoadHardware(HardwareCatalogDir(), "H100-SXM").attention_backend.name, "FLASH_ATTN");
  EXPECT_EQ(LoadHardware(HardwareCatalogDir(), "B200").attention_backend.name, "FLASHINFER");
  EXPECT_EQ(LoadHardware(HardwareCatalogDir(), "MI300X").attention_backend.name, "ROCM_ATTN");
}

TEST(Hardware, FlashAttentionTwoTilesEachQueryHeadAndThreePacksTheGroup) {
  // vLLM runs FA3 on SM 9.0 only; FA2 elsewhere on FLASH_ATTN GPUs.
  for (const char* name : {"A100-SXM-80GB", "RTX-4090", "RTX-PRO-6000"}) {
    SCOPED_TRACE(name);
    const AttentionBackendSpec backend = LoadHardware(HardwareCatalogDir(), name).attention_backend;
    EXPECT_EQ(backend.query_tile_rows, 64);
    EXPECT_FALSE(backend.packs_gqa);
    EXPECT_TRUE(backend.split_kv_grouped_heads_only);  // via seqlenq_ngroups_swapped
  }
  for (const char* name : {"H100-SXM", "H200-SXM"}) {
    SCOPED_TRACE(name);
    const AttentionBackendSpec backend = LoadHardware(HardwareCatalogDir(), name).attention_backend;
    EXPECT_EQ(backend.query_tile_rows, 128);
    EXPECT_TRUE(backend.packs_gqa);
    EXPECT_FALSE(backend.split_kv_grouped_heads_only);
  }
  // ROCm's paged attention partitions the context whatever the heads, and packs none.
  const AttentionBackendSpec rocm = LoadHardware(HardwareCatalogDir(), "MI300X").attention_backend;
  EXPECT_FALSE(rocm.packs_gqa);
  EXPECT_FALSE(rocm.split_kv_grouped_heads_only);
}

TEST(Hardware, MissingQueryTileIsRefusedWithItsKey) {
  std::string yaml = CatalogYaml();
  yaml.erase(yaml.find("  query_tile:"), yaml.find("price_per_gpu") - yaml.find("  query_tile:"));
  TempFile file("X.yaml", yaml);
  const InputError e = CatchInputError([&] { LoadHardwareFile(file.path()); });
  EXPECT_EQ(e.field(), "attention_backend.query_tile");
  EXPECT_TRUE(Mentions(e, "missing"));
}

TEST(Hardware, QueryTileNeedsPositiveRowsAndASource) {
  for (const std::string& tile : {std::string("{rows: 0, packs_gqa: false, source: s}"),
                                  std::string("{rows: 64, packs_gqa: false}")}) {
    SCOPED_TRACE(tile);
    std::string yaml = CatalogYaml();
    const std::string old = "{rows: 64, packs_gqa: false, source: s}";
    yaml.replace(yaml.find(old), old.size(), tile);
    TempFile file("X.yaml", yaml);
    const InputError e = CatchInputError([&] { LoadHardwareFile(file.path()); });
    EXPECT_EQ(e.line(), LineOf(yaml, "query_tile"));
    EXPECT_TRUE(e.field() == "attention_backend.query_tile.rows" ||
                e.field() == "attention_backend.query_tile.source")
        << e.field();
  }
}

TEST(Hardware, CompleteEntryLoads) {
  TempFile file("X.yaml", CatalogYaml());
  const HardwareSpec spec = LoadHardwareFile(file.path());
  EXPECT_EQ(spec.attention_backend.name, "FLASH_ATTN");
  EXPECT_EQ(spec.attention_backend.supported_block_sizes, (std::vector<int>{16, 32, 64}));
  EXPECT_TRUE(spec.attention_backend.split_kv_decode);
  EXPECT_EQ(spec.attention_backend.query_tile_rows, 64);
  EXPECT_FALSE(spec.attention_backend.packs_gqa);
  EXPECT_FALSE(spec.attention_backend.split_kv_grouped_heads_only);  // optional, off
  EXPECT_DOUBLE_EQ(spec.price_per_gpu_hour_usd.value, 2.5);
}

// The fit's memory efficiency holds unless the catalog has a measured streaming rate for
// the card: only the two NVIDIA GDDR cards have one (the RX 7900 XT has no measurement),
// and the fit's own HBM cards must not.
TEST(Hardware, OnlyTheNvidiaGddrCardsCarryAMeasuredStreamingEfficiency) {
  EXPECT_FALSE(LoadHardwareFile(TempFile("X.yaml", CatalogYaml()).path()).memory_stream_efficiency);
  for (const char* gpu : {"H100-SXM", "H200-SXM"})
    EXPECT_FALSE(LoadHardware(HardwareCatalogDir(), gpu).memory_stream_efficiency) << gpu;
  for (const char* gpu : {"RTX-4090", "RTX-PRO-6000"}) {
    const HardwareSpec spec = LoadHardware(HardwareCatalogDir(), gpu);
    ASSERT_TRUE(spec.memory_stream_efficiency) << gpu;
    EXPECT_DOUBLE_EQ(spec.memory_stream_efficiency->value, 0.977) << gpu;
    EXPECT_NE(spec.memory_stream_efficiency->source.find("l40.txt"), std::string::npos) << gpu;
  }
}

TEST(Hardware, AStreamingEfficiencyAboveOneIsRefused) {
  for (const char* value : {"1.2", ".nan", ".inf"}) {
    const std::string yaml = CatalogYaml() + "memory_stream_efficiency: {value: " + value +
                             ", source: a stream benchmark}\n";
    TempFile file("X.yaml", yaml);
    const InputError e = CatchInputError([&] { LoadHardwareFile(file.path()); });
    EXPECT_EQ(e.field(), "memory_stream_efficiency.value") << value;
    EXPECT_EQ(e.line(), LineOf(yaml, "memory_stream_efficiency")) << value;
    EXPECT_TRUE(Mentions(e, "at most 1")) << e.what();
  }
}

// A measured matmul rate (MAMF) replaces the fitted fraction of peak only on cards the
// fit did not see, and only where a published shape search measured one.
TEST(Hardware, OnlyMeasuredCardsOutsideTheFitCarryAMatmulRate) {
  EXPECT_FALSE(LoadHardwareFile(TempFile("X.yaml", CatalogYaml()).path()).matmul_achievable_flops);
  for (const char* gpu : {"H100-SXM", "H200-SXM", "RTX-PRO-6000", "RX-7900-XT"})
    EXPECT_FALSE(LoadHardware(HardwareCatalogDir(), gpu).matmul_achievable_flops) << gpu;
  for (const char* gpu : {"RTX-4090", "A100-SXM-80GB", "B200", "MI300X"}) {
    const HardwareSpec spec = LoadHardware(HardwareCatalogDir(), gpu);
    ASSERT_TRUE(spec.matmul_achievable_flops) << gpu;
    EXPECT_NE(spec.matmul_achievable_flops->source.find("Maximum Achievable Matmul FLOPS"),
              std::string::npos)
        << gpu;
  }
  EXPECT_DOUBLE_EQ(LoadHardware(HardwareCatalogDir(), "RTX-4090").matmul_achievable_flops->value,
                   178.5e12);
}

// 178.5 (TFLOPS written as FLOP/s) would make every GEMM a million times slower.
TEST(Hardware, AMatmulRateFarFromThePeakIsRefusedAsAUnitSlip) {
  for (const char* value : {"100", "0.24e14", "1.51e14", ".nan", ".inf"}) {  // peak: 1e14
    const std::string yaml =
        CatalogYaml() + "matmul_achievable_flops: {value: " + value + ", source: a shape search}\n";
    TempFile file("X.yaml", yaml);
    const InputError e = CatchInputError([&] { LoadHardwareFile(file.path()); });
    EXPECT_EQ(e.field(), "matmul_achievable_flops.value") << value;
    EXPECT_EQ(e.line(), LineOf(yaml, "matmul_achievable_flops")) << value;
    EXPECT_TRUE(Mentions(e, "FLOP/s")) << e.what();
  }
  for (const double value : {0.25e14, 0.8e14, 1.5e14}) {
    const std::string yaml = CatalogYaml() +
                             "matmul_achievable_flops: {value: " + std::to_string(value) +
                             ", source: a shape search}\n";
    EXPECT_DOUBLE_EQ(
        LoadHardwareFile(TempFile("X.yaml", yaml).path()).matmul_achievable_flops->value, value);
  }
}

// fp16 weights read the fp16 figure where there is one; either 16-bit figure stands in for
// the other where the catalog lists only one (it must list one).
TEST(Hardware, The16BitPeakIsTheDtypesOwnOrTheOther) {
  HardwareSpec spec;
  spec.peak_flops["bf16"] = {1e14, "s"};
  spec.peak_flops["fp8"] = {2e14, "s"};
  EXPECT_DOUBLE_EQ(spec.Peak16BitFlops(Dtype::kBfloat16), 1e14);
  EXPECT_DOUBLE_EQ(spec.Peak16BitFlops(Dtype::kFloat16), 1e14);
  EXPECT_DOUBLE_EQ(spec.Peak16BitFlops(Dtype::kFp8), 1e14);
  spec.peak_flops["fp16"] = {1.2e14, "s"};
  EXPECT_DOUBLE_EQ(spec.Peak16BitFlops(Dtype::kFloat16), 1.2e14);
  EXPECT_DOUBLE_EQ(spec.Peak16BitFlops(Dtype::kBfloat16), 1e14);
  spec.peak_flops.erase("bf16");
  EXPECT_DOUBLE_EQ(spec.Peak16BitFlops(Dtype::kBfloat16), 1.2e14);
}

TEST(Hardware, MissingAttentionBackendIsRefusedWithItsLineAndKey) {
  TempFile file("X.yaml", CatalogYaml("attention_backend"));
  const InputError e = CatchInputError([&] { LoadHardwareFile(file.path()); });
  EXPECT_EQ(e.field(), "attention_backend");
  EXPECT_EQ(e.line(), 1);  // an absent key is reported at the start of its section
  EXPECT_TRUE(Mentions(e, "X.yaml"));
  EXPECT_TRUE(Mentions(e, "missing"));
}

TEST(Hardware, MissingPriceIsRefusedWithItsKey) {
  TempFile file("X.yaml", CatalogYaml("price_per_gpu_hour_usd"));
  const InputError e = CatchInputError([&] { LoadHardwareFile(file.path()); });
  EXPECT_EQ(e.field(), "price_per_gpu_hour_usd");
  EXPECT_TRUE(Mentions(e, "missing"));
}

TEST(Hardware, UnsortedOrEmptyBlockSizesAreRefusedWithTheirLine) {
  for (const std::string& sizes : {std::string("[32, 16]"), std::string("[16, 16]"),
                                   std::string("[0, 16]"), std::string("[]")}) {
    SCOPED_TRACE(sizes);
    const std::string yaml = CatalogYaml("", sizes);
    TempFile file("X.yaml", yaml);
    const InputError e = CatchInputError([&] { LoadHardwareFile(file.path()); });
    EXPECT_EQ(e.field(), "attention_backend.supported_block_sizes.value");
    EXPECT_EQ(e.line(), LineOf(yaml, "supported_block_sizes"));
  }
}

TEST(Hardware, BlockSizesMustBeIntegers) {
  const std::string yaml = CatalogYaml("", "[16, 32.5]");
  TempFile file("X.yaml", yaml);
  const InputError e = CatchInputError([&] { LoadHardwareFile(file.path()); });
  EXPECT_EQ(e.field(), "attention_backend.supported_block_sizes.value[1]");
  EXPECT_EQ(e.line(), LineOf(yaml, "supported_block_sizes"));
}

TEST(Hardware, KnownHeadlineFigures) {
  const HardwareSpec h100 = LoadHardware(HardwareCatalogDir(), "H100-SXM");
  EXPECT_EQ(h100.compute_units.value, 132);
  EXPECT_DOUBLE_EQ(h100.memory_bandwidth_bytes_per_s.value, 3.35e12);
  EXPECT_FALSE(LoadHardware(HardwareCatalogDir(), "A100-SXM-80GB").peak_flops.contains("fp8"));
  EXPECT_EQ(LoadHardware(HardwareCatalogDir(), "MI300X").compute_unit_kind, "CU");
}

TEST(Hardware, UnknownNameListsTheCatalog) {
  const InputError e = CatchInputError([] { LoadHardware(HardwareCatalogDir(), "TPU-v5"); });
  EXPECT_EQ(e.field(), "--hardware");
  EXPECT_TRUE(Mentions(e, "H200-SXM"));
}

TEST(Hardware, FigureWithoutSourceIsRefusedWithItsLine) {
  const std::string yaml =
      std::string("name: X\nvendor: nvidia\nproduct: x\n") + "memory_bytes: {value: 1e9}\n";
  TempFile file("X.yaml", yaml);
  const InputError e = CatchInputError([&] { LoadHardwareFile(file.path()); });
  EXPECT_EQ(e.line(), 4);
  EXPECT_EQ(e.field(), "memory_bytes.source");
}

TEST(Hardware, UnknownKeyIsRefused) {
  TempFile file("X.yaml", "name: X\nvendor: nvidia\nmemory_gb: 80\n");
  const InputError e = CatchInputError([&] { LoadHardwareFile(file.path()); });
  EXPECT_EQ(e.line(), 3);
  EXPECT_EQ(e.field(), "memory_gb");
}

}  // namespace
}  // namespace fleetsim
