#include "model/hardware.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <limits>
#include <sstream>
#include <string>
#include <tuple>
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
namespace fs = std::filesystem;

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
       "  intra_node:\n"
       "    kind: nvlink4\n"
       "    topology: switch\n"
       "    links: {kind: nvlink, generation: 4, count: 18, source: s}\n"
       "    nvls: {value: true, source: s}\n"
       "    pcie: {generation: 5, lanes: 16, source: s}\n"
       "    p2p: {value: true, source: s}\n"
       "    cpu: {vendor: intel, model: sapphire-rapids, sockets: 2, gpus_per_pcie_switch: 2, "
       "source: s}\n"
       "  inter_node: {kind: ib, bandwidth_bytes_per_s: {value: 1e10, source: s}}\n"},
      {"compute_capability", "compute_capability: {value: \"9.0\", source: s}\n"},
      {"attention_backend",
       "attention_backend:\n"
       "  platform: {kind: cuda, arch: \"9.0\", reported_processors: 100, source: s}\n"
       "  priority: {value: [FLASH_ATTN], source: s}\n"
       "  backends:\n"
       "    FLASH_ATTN:\n"
       "      kernel_block_sizes: {value: " +
           block_sizes +
           ", source: s}\n"
           "      head_sizes: {value: [8], multiple_of: true, max: 256, source: s}\n"
           "      kv_cache_dtypes: {value: [auto], source: s}\n"
           "      query_tile: {rows: 64, packs_gqa: false, source: s}\n"
           "      decode:\n"
           "        flash_attn_2: {grid: flash_split, grouped_heads_only: true, source: s}\n"},
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

// The catalog's files, found by walking the folder (not through HardwareNames).
std::vector<fs::path> CatalogFiles() {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(HardwareCatalogDir())) {
    if (entry.path().extension() == ".yaml") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// What the loader and the code rely on for a catalog GPU, beyond what the loader itself
// refuses: every figure finite, positive, sourced and of a plausible magnitude for its unit
// (a bandwidth in GB/s, a latency in microseconds or a peak in TFLOPS written as the bare
// number is caught), counts that the code casts to int being whole numbers, both links
// described, the attention backends aligning hybrid blocks to 16 with sourced rules, and a
// sourced price. Returns one line per broken rule.
std::vector<std::string> ContractViolations(const HardwareSpec& spec) {
  std::vector<std::string> out;
  const auto figure = [&](const std::string& what, const SourcedValue& v, double lo, double hi) {
    if (!std::isfinite(v.value) || v.value <= 0) out.push_back(what + ": not finite and positive");
    if (!(v.value >= lo && v.value <= hi)) {
      std::ostringstream text;
      text << what << ": " << v.value << " outside [" << lo << ", " << hi << "] (a unit slip?)";
      out.push_back(text.str());
    }
    if (v.source.empty()) out.push_back(what + ": no source");
  };
  const auto whole = [&](const std::string& what, const SourcedValue& v) {
    if (v.value != std::floor(v.value)) out.push_back(what + ": not a whole number");
  };
  const auto check = [&](bool ok, const std::string& what) {
    if (!ok) out.push_back(what);
  };

  check(!spec.name.empty(), "name: empty");
  check(spec.vendor == "nvidia" || spec.vendor == "amd", "vendor: '" + spec.vendor + "'");
  check(!spec.product.empty(), "product: empty");
  figure("memory_bytes", spec.memory_bytes, 1e9, 1LL << 40);
  if (spec.memory_visible_bytes) {
    figure("memory_visible_bytes", *spec.memory_visible_bytes, 1e9, 1LL << 40);
  }
  // The driver-visible total is never above what the datasheet says the card has.
  check(spec.UsableMemoryBytes() > 0 &&
            spec.UsableMemoryBytes() <= static_cast<int64_t>(spec.memory_bytes.value),
        "memory_visible_bytes: above memory_bytes");
  figure("memory_bandwidth_bytes_per_s", spec.memory_bandwidth_bytes_per_s, 1e11, 1e14);
  if (spec.memory_stream_efficiency) {
    figure("memory_stream_efficiency", *spec.memory_stream_efficiency, 0.5, 1);
  }
  check(spec.Peak16BitFlops(Dtype::kBfloat16) > 0, "peak_flops: no bf16 or fp16 figure");
  for (const auto& [dtype, peak] : spec.peak_flops)
    figure("peak_flops." + dtype, peak, 1e12, 1e17);
  if (spec.matmul_achievable_flops) {
    const double peak = spec.Peak16BitFlops(Dtype::kBfloat16);
    figure("matmul_achievable_flops", *spec.matmul_achievable_flops, 0.25 * peak, 1.5 * peak);
  }
  figure("compute_units", spec.compute_units, 1, 10000);
  whole("compute_units", spec.compute_units);
  check(spec.compute_unit_kind == (spec.vendor == "amd" ? "CU" : "SM"),
        "compute_units.kind: '" + spec.compute_unit_kind + "'");
  figure("l2_cache_bytes", spec.l2_cache_bytes, 1e6, 1LL << 30);
  // Tensor parallelism stays inside a node: TP sizes run up to gpus_per_node.
  figure("node.gpus_per_node", spec.gpus_per_node, 1, 1024);
  whole("node.gpus_per_node", spec.gpus_per_node);
  const IntraNodeSpec& intra = spec.intra_node;
  check(!intra.kind.empty(), "node.intra_node.kind: empty");
  const std::string& topology = intra.topology;
  check(topology == "switch" || topology == "mesh" || topology == "pcie",
        "node.intra_node.topology: '" + topology + "'");
  // GPU links exactly where the topology has them; NVLink SHARP only on an NVSwitch; a
  // GPU link count a node can have; PCIe of a real generation and width.
  check(intra.links.has_value() == (topology != "pcie"), "node.intra_node.links: vs topology");
  if (intra.links) {
    check(intra.links->count >= 1 && intra.links->count <= 64, "node.intra_node.links.count");
    check(!intra.links->source.empty(), "node.intra_node.links: no source");
    check(intra.links->kind == (spec.vendor == "amd" ? "xgmi" : "nvlink"),
          "node.intra_node.links.kind: '" + intra.links->kind + "'");
  }
  check(!intra.nvls || topology == "switch", "node.intra_node.nvls: without an NVSwitch");
  check(!intra.nvls || intra.nvls_source.size() > 0, "node.intra_node.nvls: no source");
  check(intra.pcie.generation >= 3 && intra.pcie.generation <= 6 &&
            (intra.pcie.lanes == 8 || intra.pcie.lanes == 16),
        "node.intra_node.pcie: generation or lanes");
  check(!intra.pcie.source.empty(), "node.intra_node.pcie: no source");
  check(!intra.p2p_source.empty(), "node.intra_node.p2p: no source");
  check(!intra.cpu.source.empty(), "node.intra_node.cpu: no source");
  check(static_cast<int>(spec.gpus_per_node.value) % intra.cpu.sockets == 0,
        "node.intra_node.cpu.sockets: does not divide the GPUs");
  check(!spec.inter_node.kind.empty(), "node.inter_node.kind: empty");
  figure("node.inter_node.bandwidth_bytes_per_s", spec.inter_node.bandwidth_bytes_per_s, 1e8, 1e13);
  // NCCL's tables and vLLM's rules are keyed by the CUDA capability.
  if (spec.vendor == "nvidia") {
    check(spec.compute_capability >= 70 && spec.compute_capability <= 130 &&
              !spec.compute_capability_source.empty(),
          "compute_capability: missing or implausible");
  } else {
    check(spec.compute_capability == 0, "compute_capability: on an AMD GPU");
  }

  // The attention catalog (model/attention_backend.h): vLLM's order names backends the
  // entry describes, each aligns hybrid blocks to 16 -- FlashAttention, FlashInfer, Triton
  // and vLLM's ROCm backend all do, the base ENGINE_SEMANTICS.md's worked numbers use -- and
  // each has a default decode kernel without conditions (the fallback vLLM's dispatch ends on).
  const AttentionCatalog& attention = spec.attention;
  check(attention.reported_processors > 0, "attention_backend.platform.reported_processors");
  check(!attention.priority.empty() && !attention.priority_source.empty(),
        "attention_backend.priority: empty or unsourced");
  for (const BackendSpec& backend : attention.backends) {
    const std::string at = "attention_backend.backends." + backend.name;
    check(backend.AlignmentBase() == 16, at + ".kernel_block_sizes: smallest is not 16");
    check(!backend.kernel_block_sizes.source.empty() && !backend.head_sizes.source.empty() &&
              !backend.kv_cache_dtypes_source.empty() && !backend.query_tile_source.empty(),
          at + ": a rule without a source");
    check(backend.query_tile_rows > 0, at + ".query_tile.rows: not positive");
    check(std::any_of(backend.decode.begin(), backend.decode.end(),
                      [](const DecodeKernelSpec& k) {
                        return k.default_route && k.gate.source.empty() && !k.source.empty();
                      }),
          at + ".decode: no sourced fallback kernel");
  }
  figure("price_per_gpu_hour_usd", spec.price_per_gpu_hour_usd, 0.01, 1000);
  return out;
}

TEST(Hardware, HardwareNamesListsEveryCatalogFileSorted) {
  std::vector<std::string> stems;
  for (const fs::path& file : CatalogFiles())
    stems.push_back(file.stem().string());
  ASSERT_FALSE(stems.empty());
  EXPECT_EQ(HardwareNames(HardwareCatalogDir()), stems);
}

TEST(Hardware, EveryCatalogEntryLoadsByNameAndMeetsTheContract) {
  for (const fs::path& file : CatalogFiles()) {
    const std::string name = file.stem().string();
    SCOPED_TRACE(name);
    HardwareSpec spec;
    try {
      spec = LoadHardware(HardwareCatalogDir(), name);
    } catch (const InputError& e) {
      ADD_FAILURE() << e.what();
      continue;
    }
    EXPECT_EQ(spec.name, name);
    EXPECT_EQ(fs::path(spec.file), file);
    EXPECT_EQ(ContractViolations(spec), std::vector<std::string>{});
  }
}

// The contract check itself: silent on a complete entry, and each kind of broken figure
// is reported.
TEST(Hardware, TheCatalogContractCatchesBrokenFigures) {
  const HardwareSpec good = LoadHardwareFile(TempFile("X.yaml", CatalogYaml()).path());
  EXPECT_EQ(ContractViolations(good), std::vector<std::string>{});
  const std::vector<std::pair<std::string, std::function<void(HardwareSpec&)>>> breaks{
      {"memory_bytes", [](HardwareSpec& s) { s.memory_bytes.value = std::nan(""); }},
      {"memory_bandwidth", [](HardwareSpec& s) { s.memory_bandwidth_bytes_per_s.value = 3.35e3; }},
      {"peak_flops.bf16", [](HardwareSpec& s) { s.peak_flops["bf16"].value = 989; }},
      {"peak_flops.fp8",
       [](HardwareSpec& s) {
         s.peak_flops["fp8"] = {2e15, ""};
       }},
      {"compute_units", [](HardwareSpec& s) { s.compute_units.value = 131.5; }},
      {"gpus_per_node", [](HardwareSpec& s) { s.gpus_per_node.value = 0.5; }},
      {"intra links", [](HardwareSpec& s) { s.intra_node.links.reset(); }},
      {"nvls on pcie", [](HardwareSpec& s) { s.intra_node.topology = "pcie"; }},
      {"pcie lanes", [](HardwareSpec& s) { s.intra_node.pcie.lanes = 12; }},
      {"compute capability", [](HardwareSpec& s) { s.compute_capability = 0; }},
      {"inter bandwidth",
       [](HardwareSpec& s) {
         s.inter_node.bandwidth_bytes_per_s.value = std::numeric_limits<double>::infinity();
       }},
      {"inter kind", [](HardwareSpec& s) { s.inter_node.kind.clear(); }},
      {"memory source", [](HardwareSpec& s) { s.memory_bytes.source.clear(); }},
      {"visible memory",
       [](HardwareSpec& s) {
         s.memory_visible_bytes = {2e9, "s"};
       }},
      {"block sizes",
       [](HardwareSpec& s) {
         s.attention.backends.front().kernel_block_sizes.values = {32, 64};
       }},
      {"compute unit kind", [](HardwareSpec& s) { s.compute_unit_kind = "CU"; }},
      {"price", [](HardwareSpec& s) { s.price_per_gpu_hour_usd.value = 0; }},
  };
  for (const auto& [what, mutate] : breaks) {
    HardwareSpec broken = good;
    mutate(broken);
    EXPECT_FALSE(ContractViolations(broken).empty()) << what;
  }
}

TEST(Hardware, DefaultAttentionBackends) {
  // vllm/platforms/cuda.py: FlashInfer first on SM 10.x, FlashAttention elsewhere;
  // vllm/platforms/rocm.py: ROCM_ATTN first.
  EXPECT_EQ(LoadHardware(HardwareCatalogDir(), "H100-SXM").attention.priority.front(),
            "FLASH_ATTN");
  EXPECT_EQ(LoadHardware(HardwareCatalogDir(), "B200").attention.priority.front(), "FLASHINFER");
  EXPECT_EQ(LoadHardware(HardwareCatalogDir(), "MI300X").attention.priority.front(), "ROCM_ATTN");
}

TEST(Hardware, FlashAttentionTwoTilesEachQueryHeadAndThreePacksTheGroup) {
  // vLLM runs FA3 on SM 9.0 only; FA2 elsewhere on FLASH_ATTN GPUs.
  for (const char* name : {"A100-SXM-80GB", "RTX-4090", "RTX-PRO-6000"}) {
    SCOPED_TRACE(name);
    const AttentionPlan plan =
        DefaultAttentionPlan(LoadHardware(HardwareCatalogDir(), name).attention);
    EXPECT_EQ(plan.decode.name, "flash_attn_2");
    EXPECT_EQ(plan.backend.query_tile_rows, 64);
    EXPECT_FALSE(plan.backend.packs_gqa);
    EXPECT_TRUE(plan.decode.split_grouped_heads_only);  // via seqlenq_ngroups_swapped
  }
  for (const char* name : {"H100-SXM", "H200-SXM"}) {
    SCOPED_TRACE(name);
    const AttentionPlan plan =
        DefaultAttentionPlan(LoadHardware(HardwareCatalogDir(), name).attention);
    EXPECT_EQ(plan.decode.name, "flash_attn_3");
    EXPECT_EQ(plan.backend.query_tile_rows, 128);
    EXPECT_TRUE(plan.backend.packs_gqa);
    EXPECT_FALSE(plan.decode.split_grouped_heads_only);
  }
  // ROCm's paged attention partitions the context whatever the heads, and packs none.
  const AttentionPlan rocm =
      DefaultAttentionPlan(LoadHardware(HardwareCatalogDir(), "MI300X").attention);
  EXPECT_EQ(rocm.decode.grid, DecodeGrid::kPartitioned);
  EXPECT_FALSE(rocm.backend.packs_gqa);
}

TEST(Hardware, MissingQueryTileIsRefusedWithItsKey) {
  std::string yaml = CatalogYaml();
  yaml.erase(yaml.find("      query_tile:"),
             yaml.find("      decode:") - yaml.find("      query_tile:"));
  TempFile file("X.yaml", yaml);
  const InputError e = CatchInputError([&] { LoadHardwareFile(file.path()); });
  EXPECT_EQ(e.field(), "attention_backend.backends.FLASH_ATTN.query_tile");
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
    EXPECT_TRUE(e.field() == "attention_backend.backends.FLASH_ATTN.query_tile.rows" ||
                e.field() == "attention_backend.backends.FLASH_ATTN.query_tile.source")
        << e.field();
  }
}

TEST(Hardware, CompleteEntryLoads) {
  TempFile file("X.yaml", CatalogYaml());
  const HardwareSpec spec = LoadHardwareFile(file.path());
  ASSERT_EQ(spec.attention.backends.size(), 1u);
  const BackendSpec& backend = spec.attention.backends.front();
  EXPECT_EQ(backend.name, "FLASH_ATTN");
  EXPECT_EQ(backend.kernel_block_sizes.values, (std::vector<int>{16, 32, 64}));
  EXPECT_EQ(backend.query_tile_rows, 64);
  EXPECT_FALSE(backend.packs_gqa);
  ASSERT_EQ(backend.decode.size(), 1u);
  EXPECT_EQ(backend.decode.front().grid, DecodeGrid::kFlashSplit);
  EXPECT_TRUE(backend.decode.front().split_grouped_heads_only);
  EXPECT_TRUE(backend.decode.front().default_route);  // optional, on
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

// A user's hardware file with a NaN or infinite figure is refused like a negative one:
// such a figure would poison every step cost silently.
TEST(Hardware, ANonFiniteFigureIsRefusedWithItsKey) {
  for (const auto& [from, to] :
       {std::pair{"memory_bandwidth_bytes_per_s: {value: 1e12",
                  "memory_bandwidth_bytes_per_s: {value: .nan"},
        std::pair{"bandwidth_bytes_per_s: {value: 1e10", "bandwidth_bytes_per_s: {value: .inf"}}) {
    std::string yaml = CatalogYaml();
    const std::size_t at = yaml.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    yaml.replace(at, std::string(from).size(), to);
    const InputError e =
        CatchInputError([&] { LoadHardwareFile(TempFile("X.yaml", yaml).path()); });
    EXPECT_TRUE(Mentions(e, "must be a positive, finite number")) << e.what();
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
    EXPECT_TRUE(Mentions(e, value[0] == '.' ? "finite" : "at most 1")) << e.what();
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
    EXPECT_TRUE(Mentions(e, value[0] == '.' ? "finite" : "FLOP/s")) << e.what();
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
    EXPECT_EQ(e.field(), "attention_backend.backends.FLASH_ATTN.kernel_block_sizes.value");
    EXPECT_EQ(e.line(), LineOf(yaml, "kernel_block_sizes"));
  }
}

TEST(Hardware, BlockSizesMustBeIntegers) {
  const std::string yaml = CatalogYaml("", "[16, 32.5]");
  TempFile file("X.yaml", yaml);
  const InputError e = CatchInputError([&] { LoadHardwareFile(file.path()); });
  EXPECT_EQ(e.field(), "attention_backend.backends.FLASH_ATTN.kernel_block_sizes.value[1]");
  EXPECT_EQ(e.line(), LineOf(yaml, "kernel_block_sizes"));
}

TEST(Hardware, KnownHeadlineFigures) {
  const HardwareSpec h100 = LoadHardware(HardwareCatalogDir(), "H100-SXM");
  EXPECT_EQ(h100.compute_units.value, 132);
  EXPECT_DOUBLE_EQ(h100.memory_bandwidth_bytes_per_s.value, 3.35e12);
  EXPECT_FALSE(LoadHardware(HardwareCatalogDir(), "A100-SXM-80GB").peak_flops.contains("fp8"));
  EXPECT_EQ(LoadHardware(HardwareCatalogDir(), "MI300X").compute_unit_kind, "CU");
}

// The node as NCCL and vLLM see it: each broken field refused at its line.
TEST(Hardware, NodeLayoutIsRefusedFieldByField) {
  const std::vector<std::tuple<std::string, std::string, std::string>> cases{
      {"    links: {kind: nvlink, generation: 4, count: 18, source: s}\n", "",
       "node.intra_node.links"},
      {"kind: nvlink, generation: 4", "kind: infinity, generation: 4",
       "node.intra_node.links.kind"},
      {"count: 18", "count: 0", "node.intra_node.links.count"},
      {"kind: nvlink, generation: 4, count: 18,",
       "kind: nvlink, generation: 4, count: 18, bandwidth_bytes_per_s: {value: 25e9, source: s},",
       "node.intra_node.links.bandwidth_bytes_per_s"},
      {"kind: nvlink, generation: 4", "kind: xgmi, generation: 4",
       "node.intra_node.links.bandwidth_bytes_per_s"},
      {"topology: switch", "topology: mesh", "node.intra_node.nvls.value"},
      {"lanes: 16", "lanes: 0", "node.intra_node.pcie.lanes"},
      {"    p2p: {value: true, source: s}\n", "", "node.intra_node.p2p"},
      {"vendor: intel", "vendor: arm", "node.intra_node.cpu.vendor"},
      {"gpus_per_pcie_switch: 2", "gpus_per_pcie_switch: 3",
       "node.intra_node.cpu.gpus_per_pcie_switch"},
      {"  inter_node: {kind: ib, bandwidth_bytes_per_s: {value: 1e10, source: s}}",
       "  inter_node: {kind: ib, bandwidth_bytes_per_s: {value: 1e10, source: s}, latency_s: "
       "{value: 1e-6, source: s}}",
       "node.inter_node.latency_s"},
      {"value: \"9.0\"", "value: \"9\"", "compute_capability.value"},
      {"compute_capability: {value: \"9.0\", source: s}\n", "", "compute_capability"},
  };
  for (const auto& [from, to, field] : cases) {
    SCOPED_TRACE(from);
    std::string yaml = CatalogYaml();
    const std::size_t at = yaml.find(from);
    ASSERT_NE(at, std::string::npos);
    yaml.replace(at, from.size(), to);
    const InputError e =
        CatchInputError([&] { LoadHardwareFile(TempFile("X.yaml", yaml).path()); });
    EXPECT_EQ(e.field(), field) << e.what();
  }
  // A PCIe card names no GPU links; an AMD card no CUDA capability.
  std::string pcie = CatalogYaml();
  pcie.replace(pcie.find("topology: switch"), 16, "topology: pcie");
  const InputError e = CatchInputError([&] { LoadHardwareFile(TempFile("X.yaml", pcie).path()); });
  EXPECT_EQ(e.field(), "node.intra_node.links");
  std::string amd = CatalogYaml();
  amd.replace(amd.find("vendor: nvidia"), 14, "vendor: amd");
  const InputError a = CatchInputError([&] { LoadHardwareFile(TempFile("X.yaml", amd).path()); });
  EXPECT_EQ(a.field(), "compute_capability");
}

TEST(Hardware, NodeFactsNcclAndVllmDependOn) {
  const HardwareSpec h100 = LoadHardware(HardwareCatalogDir(), "H100-SXM");
  EXPECT_EQ(h100.compute_capability, 90);
  EXPECT_EQ(h100.intra_node.links->count, 18);
  EXPECT_TRUE(h100.intra_node.nvls);
  EXPECT_TRUE(h100.intra_node.p2p);
  const HardwareSpec a100 = LoadHardware(HardwareCatalogDir(), "A100-SXM-80GB");
  EXPECT_EQ(a100.compute_capability, 80);
  EXPECT_EQ(a100.intra_node.links->count, 12);
  EXPECT_FALSE(a100.intra_node.nvls);
  // GeForce: no peer-to-peer; the PRO 6000 server: P2P, two GPUs per PCIe switch, two
  // sockets.
  const HardwareSpec rtx = LoadHardware(HardwareCatalogDir(), "RTX-4090");
  EXPECT_FALSE(rtx.intra_node.p2p);
  EXPECT_FALSE(rtx.intra_node.links);
  EXPECT_EQ(rtx.intra_node.pcie.generation, 4);
  const HardwareSpec pro = LoadHardware(HardwareCatalogDir(), "RTX-PRO-6000");
  EXPECT_TRUE(pro.intra_node.p2p);
  EXPECT_EQ(pro.intra_node.cpu.sockets, 2);
  EXPECT_EQ(pro.intra_node.cpu.gpus_per_pcie_switch, 2);
  EXPECT_EQ(pro.compute_capability, 120);
  EXPECT_EQ(LoadHardware(HardwareCatalogDir(), "MI300X").intra_node.links->kind, "xgmi");
}

TEST(Hardware, UnknownNameListsTheCatalog) {
  const InputError e = CatchInputError([] { LoadHardware(HardwareCatalogDir(), "TPU-v5"); });
  EXPECT_EQ(e.field(), "--hardware");
  for (const std::string& name : HardwareNames(HardwareCatalogDir()))
    EXPECT_TRUE(Mentions(e, name)) << name;
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
