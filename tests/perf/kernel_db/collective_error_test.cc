// The collective model against the measured aiconfigurator tables (read in place from
// ../shared/data): the shipped constants are the fit on the H200 tables alone, and the
// held-out systems meet the target (MAPE <= 15 % per operation) -- or, where they do not,
// stay at the miss docs/COLLECTIVES.md reports.
#include "perf/kernel_db/collective_error.h"

#include <string>

#include <gtest/gtest.h>

#include "core/project_paths.h"
#include "model/hardware.h"
#include "perf/collective_constants.h"
#include "perf/kernel_db/measured_collectives.h"
#include "support/shared_data.h"

namespace fleetsim {
namespace {

std::string Tables() {
  return (ProjectRoot() / ".." / "shared" / "data" / "profiles" / "aiconfigurator").string();
}

CollectiveComparison Compare(const std::string& system) {
  const HardwareSpec hardware = LoadHardware(HardwareCatalogDir(), HardwareOfSystem(system));
  return CompareCollectives(LoadMeasuredCollectives(Tables(), system), hardware,
                            CollectiveConstants{});
}

TEST(CollectiveTables, ReadsEveryRowInPlace) {
  FLEETSIM_REQUIRE_SHARED_DATA();
  const MeasuredCollectives h100 = LoadMeasuredCollectives(Tables(), "h100_sxm");
  EXPECT_EQ(h100.nccl_version, "2.29.2");
  EXPECT_EQ(h100.vllm_version, "0.19.0");
  // 504 nccl-tests rows (4 collectives x 2 types x 3 GPU counts x 21 sizes) and 138 vLLM
  // rows (2 modes x 3 GPU counts x 23 sizes).
  EXPECT_EQ(h100.rows.size(), 504u + 138u);
  // The first row: all_gather, half, 2 GPUs, 256 elements = 512 bytes, 0.00531 ms.
  EXPECT_EQ(h100.rows.front().operation, "all_gather");
  EXPECT_EQ(h100.rows.front().bytes, 512);
  EXPECT_DOUBLE_EQ(h100.rows.front().measured_us, 5.31);
  EXPECT_EQ(LoadMeasuredCollectives(Tables(), "a100_sxm").nccl_version, "2.27.3");
}

// The shipped CollectiveConstants are what the fit on the H200 tables gives, exactly.
TEST(CollectiveTables, ShippedConstantsAreTheH200Fit) {
  FLEETSIM_REQUIRE_SHARED_DATA();
  const HardwareSpec h200 = LoadHardware(HardwareCatalogDir(), "H200-SXM");
  const CollectiveConstants fit =
      FitCollectiveConstants(LoadMeasuredCollectives(Tables(), "h200_sxm"), h200);
  const CollectiveConstants shipped;
  EXPECT_DOUBLE_EQ(fit.nccl_latency_scale, shipped.nccl_latency_scale);
  EXPECT_DOUBLE_EQ(fit.nccl_bandwidth_efficiency, shipped.nccl_bandwidth_efficiency);
  EXPECT_DOUBLE_EQ(fit.nccl_ring_local_pass, shipped.nccl_ring_local_pass);
  EXPECT_DOUBLE_EQ(fit.p2p_latency_scale, shipped.p2p_latency_scale);
  EXPECT_DOUBLE_EQ(fit.p2p_bandwidth_efficiency, shipped.p2p_bandwidth_efficiency);
  EXPECT_DOUBLE_EQ(fit.custom_latency_s, shipped.custom_latency_s);
  EXPECT_DOUBLE_EQ(fit.custom_bandwidth_fraction, shipped.custom_bandwidth_fraction);
  EXPECT_DOUBLE_EQ(fit.symm_mem_latency_s, shipped.symm_mem_latency_s);
  EXPECT_DOUBLE_EQ(fit.symm_mem_bandwidth_fraction, shipped.symm_mem_bandwidth_fraction);
}

// The H100 tables (NCCL 2.29.2, vLLM 0.19.0) were not fitted on: every operation within
// 15 %.
TEST(CollectiveTables, HeldOutH100MeetsTheTarget) {
  FLEETSIM_REQUIRE_SHARED_DATA();
  const CollectiveComparison c = Compare("h100_sxm");
  ASSERT_EQ(c.operations.size(), 6u);
  for (const CollectiveOperationError& op : c.operations) {
    if (!op.target) continue;
    EXPECT_LE(op.mape, 0.15) << op.operation;
  }
}

// The A100 tables (NCCL 2.27.3, vLLM 0.14.0) were not fitted on either. vLLM's all-reduce
// under CUDA graphs meets the target; nccl-tests' collectives do not (their messages up to
// 8 KiB take 1.5x the H100's time at the median on that host, which no catalog figure
// explains; docs/COLLECTIVES.md): the test holds them within about two points of the
// figures docs/COLLECTIVES.md reports (27.5, 30.8, 28.2, 28.9 %), so a change that makes
// them worse fails here.
TEST(CollectiveTables, HeldOutA100) {
  FLEETSIM_REQUIRE_SHARED_DATA();
  const CollectiveComparison c = Compare("a100_sxm");
  EXPECT_LE(c.Operation("vllm all_reduce (graph)")->mape, 0.15);
  EXPECT_LE(c.Operation("nccl all_reduce")->mape, 0.30);
  EXPECT_LE(c.Operation("nccl all_gather")->mape, 0.33);
  EXPECT_LE(c.Operation("nccl reduce_scatter")->mape, 0.30);
  EXPECT_LE(c.Operation("nccl alltoall")->mape, 0.31);
}

// The bandwidth of large ring collectives, latency left out: the bytes between the 128 and
// 256 MiB rows (fp16) over the time between them. With the ring's local pass
// (CollectiveConstants::nccl_ring_local_pass) the model carries what every GPU count
// measured, on the held-out systems too, within 15 %; NCCL's estimate alone (scaled by one
// efficiency) had 2-GPU all-gathers and reduce-scatters carry 0.71-0.82 of it
// (docs/COLLECTIVES.md).
TEST(CollectiveTables, LargeRingCollectivesCarryWhatTheyMeasured) {
  FLEETSIM_REQUIRE_SHARED_DATA();
  for (const std::string system : {"h200_sxm", "h100_sxm", "a100_sxm"}) {
    const CollectiveComparison c = Compare(system);
    for (const std::string op : {"nccl all_gather", "nccl reduce_scatter", "nccl all_reduce"}) {
      for (const int gpus : {2, 4, 8}) {
        const CollectiveRowError* low = nullptr;
        const CollectiveRowError* high = nullptr;
        for (const CollectiveRowError& r : c.rows) {
          if (r.operation != op || r.measured.gpus != gpus || r.measured.dtype != "half") continue;
          if (r.measured.bytes == (int64_t{128} << 20)) low = &r;
          if (r.measured.bytes == (int64_t{256} << 20)) high = &r;
        }
        ASSERT_TRUE(low && high) << system << " " << op << " " << gpus;
        const double measured = high->measured.measured_us - low->measured.measured_us;
        const double model = high->model_us - low->model_us;
        EXPECT_NEAR(measured / model, 1.0, 0.15) << system << " " << op << " " << gpus << " GPUs";
      }
    }
  }
}

}  // namespace
}  // namespace fleetsim
