#include "model/hardware.h"

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
