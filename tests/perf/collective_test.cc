// The TP all-reduce cost of perf/collective.h, checked against its documented formula
//   time = 2 (p - 1) x latency + 2 (p - 1) / p x bytes / bandwidth
// with the expected values worked by hand (in the comments), and on every catalog GPU.
#include "perf/collective.h"

#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/project_paths.h"
#include "model/hardware.h"

namespace fleetsim {
namespace {

// The intra-node link figures of cluster_configs/hardware/H100-SXM.yaml (NVLink 4: 450e9
// B/s per GPU per direction; 0.6 us per hop, NCCL's ring/LL figure) and A100-SXM-80GB.yaml
// (NVLink 3: 300e9 B/s, 0.6 us).
AllReduceModel H100(int ranks) {
  return {ranks, 450e9, 0.6e-6};
}
AllReduceModel A100(int ranks) {
  return {ranks, 300e9, 0.6e-6};
}

TEST(AllReduce, OneRankCostsNothing) {
  for (const int ranks : {0, 1}) {
    EXPECT_EQ(H100(ranks).Nanoseconds(0), 0.0);
    EXPECT_EQ(H100(ranks).Nanoseconds(9'000'000), 0.0);
    EXPECT_EQ(H100(ranks).Nanoseconds(int64_t{1} << 40), 0.0);
  }
  // Not even a latency when the link is unknown (TP 1 has no hardware link).
  EXPECT_EQ(AllReduceModel{}.Nanoseconds(4096), 0.0);
}

TEST(AllReduce, HandWorkedValuesOnH100AndA100) {
  // 9 MB over NVLink 4: bytes / bandwidth = 9e6 / 450e9 = 20 us.
  //   TP 2: 2 x 1 x 0.6 us + 2 x 1 / 2 x 20 us =  1.2 + 20   = 21.2 us
  //   TP 4: 2 x 3 x 0.6 us + 2 x 3 / 4 x 20 us =  3.6 + 30   = 33.6 us
  //   TP 8: 2 x 7 x 0.6 us + 2 x 7 / 8 x 20 us =  8.4 + 35   = 43.4 us
  EXPECT_NEAR(H100(2).Nanoseconds(9'000'000), 21'200, 1e-6);
  EXPECT_NEAR(H100(4).Nanoseconds(9'000'000), 33'600, 1e-6);
  EXPECT_NEAR(H100(8).Nanoseconds(9'000'000), 43'400, 1e-6);
  // Over NVLink 3: 9e6 / 300e9 = 30 us; TP 8: 8.4 + 1.75 x 30 = 60.9 us.
  EXPECT_NEAR(A100(8).Nanoseconds(9'000'000), 60'900, 1e-6);
  // No bytes: the latency alone, 2 (p - 1) hops of 0.6 us.
  EXPECT_NEAR(H100(2).Nanoseconds(0), 1'200, 1e-6);
  EXPECT_NEAR(H100(8).Nanoseconds(0), 8'400, 1e-6);
  // One hidden state of Llama-3.1-8B for 1 token (4096 x 2 bytes) at TP 2:
  //   1.2 us + 8192 / 450e9 s = 1.2 us + 18.204... ns.
  EXPECT_NEAR(H100(2).Nanoseconds(8192), 1'200 + 8192 / 450.0, 1e-6);
}

TEST(AllReduce, LinearInBytesAndGrowingWithRanks) {
  for (const int ranks : {2, 3, 4, 8}) {
    SCOPED_TRACE(ranks);
    const AllReduceModel model = H100(ranks);
    const double fixed = model.Nanoseconds(0);
    double previous = fixed;
    for (const int64_t bytes : {int64_t{1}, int64_t{4096}, int64_t{1} << 20, int64_t{1} << 30}) {
      const double t = model.Nanoseconds(bytes);
      EXPECT_GT(t, previous) << bytes;
      previous = t;
      // Doubling the bytes doubles the part above the latency.
      EXPECT_NEAR(model.Nanoseconds(2 * bytes) - fixed, 2 * (t - fixed), 1e-9 * t) << bytes;
    }
    // More ranks: more hops and a larger share of the bytes per GPU.
    EXPECT_LT(model.Nanoseconds(1 << 20), H100(ranks + 1).Nanoseconds(1 << 20));
    // A faster link is never slower.
    EXPECT_LE(model.Nanoseconds(1 << 20), A100(ranks).Nanoseconds(1 << 20));
  }
}

// Every catalog GPU's intra-node link, as engine_setup builds the model for TP > 1, gives
// a positive, finite cost that rises with the message size, up to a full node.
TEST(AllReduce, EveryCatalogLinkGivesAFiniteRisingCost) {
  const std::vector<std::string> names = HardwareNames(HardwareCatalogDir());
  ASSERT_FALSE(names.empty());
  for (const std::string& name : names) {
    SCOPED_TRACE(name);
    const HardwareSpec spec = LoadHardware(HardwareCatalogDir(), name);
    for (int tp = 2; tp <= static_cast<int>(spec.gpus_per_node.value); tp *= 2) {
      const AllReduceModel model{tp, spec.intra_node.bandwidth_bytes_per_s.value,
                                 spec.intra_node.latency_s.value};
      const double small = model.Nanoseconds(8192);
      const double large = model.Nanoseconds(64 << 20);
      EXPECT_TRUE(std::isfinite(small) && small > 0) << tp;
      EXPECT_TRUE(std::isfinite(large) && large > small) << tp;
    }
  }
}

}  // namespace
}  // namespace fleetsim
