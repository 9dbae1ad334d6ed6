// The collective model of perf/collective.h and its parts, against values worked by hand
// from NCCL 2.29.2's and vLLM 0.19.0's source (the comments show the arithmetic).
#include "perf/collective.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/project_paths.h"
#include "model/hardware.h"
#include "perf/nccl_model.h"
#include "perf/nccl_topology.h"
#include "perf/vllm_all_reduce.h"

namespace fleetsim {
namespace {

const HardwareSpec& Gpu(const std::string& name) {
  static std::map<std::string, HardwareSpec> cache;
  auto it = cache.find(name);
  if (it == cache.end()) it = cache.emplace(name, LoadHardware(HardwareCatalogDir(), name)).first;
  return it->second;
}

constexpr int64_t kKiB = 1024;
constexpr int64_t kMiB = 1024 * 1024;

TEST(NcclTopology, LinkFiguresFromNcclsTables) {
  EXPECT_DOUBLE_EQ(NcclNvlinkGBs(90), 20.6);   // SM90_NVLINK_BW
  EXPECT_DOUBLE_EQ(NcclNvlinkGBs(80), 20.0);   // SM80_NVLINK_BW
  EXPECT_DOUBLE_EQ(NcclNvlinkGBs(86), 12.0);   // SM86_NVLINK_BW
  EXPECT_DOUBLE_EQ(NcclNvlinkGBs(100), 40.1);  // SM100_NVLINK_BW
  EXPECT_DOUBLE_EQ(NcclPcieGBs(4, 16), 24.0);  // 16 lanes x 120 / 80
  EXPECT_DOUBLE_EQ(NcclPcieGBs(5, 16), 48.0);  // 16 x 240 / 80
  EXPECT_DOUBLE_EQ(NcclPcieGBs(3, 16), 12.0);  // PCI_BW, "PCI Gen3 x16"
  EXPECT_DOUBLE_EQ(NcclInterCpuGBs({"amd", "epyc-rome", 2, 2, "s"}), 16.0);
  EXPECT_DOUBLE_EQ(NcclInterCpuGBs({"intel", "sapphire-rapids", 2, 2, "s"}), 22.0);
  EXPECT_DOUBLE_EQ(NcclInterCpuGBs({"intel", "emerald-rapids", 2, 2, "s"}), 40.0);
  EXPECT_DOUBLE_EQ(NcclInterCpuGBs({"intel", "granite-rapids", 2, 2, "s"}), 6.0);  // unknown
}

// H100: 18 NVLinks x 20.6 = 370.8 GB/s per GPU to the NVSwitches. Ring, pass 1 over the
// SM90 speeds: 60 GB/s fits 6 channels (360), 50 fits 7 (350), 40 fits 9 (360), 30 fits
// 12 (360, not better); 24 / 60 < .49 stops. 6 x 60 doubles to 12 channels of 30
// (ncclTopoDupChannels: 60 >= 25 and not below 50); 40 GB/s x 12 does not fit. The tree
// gets the ring's 12 channels: 30 is the first speed with 12 x s <= 370.8 x 8 / 7.
// NVLS: 8 channels (one headed by each GPU), each costing 9 s on every GPU: 50 x 9 > 370.8,
// 40 x 9 = 360 fits; pass 2 raises only the inter speed, 40 -> 50 -> 60.
TEST(NcclTopology, H100NodeOfEight) {
  const NcclTopology t = SearchNcclTopology(Gpu("H100-SXM"), 8);
  EXPECT_EQ(t.transport, NcclTransport::kNvlink);
  EXPECT_TRUE(t.nvlink);
  EXPECT_DOUBLE_EQ(t.total_bw, 18 * 20.6);
  EXPECT_EQ(t.ring.channels, 12);
  EXPECT_DOUBLE_EQ(t.ring.bw_intra, 30);
  EXPECT_EQ(t.tree.channels, 12);
  EXPECT_DOUBLE_EQ(t.tree.bw_intra, 30);
  EXPECT_EQ(t.nvls.channels, 8);
  EXPECT_DOUBLE_EQ(t.nvls.bw_intra, 40);
  EXPECT_DOUBLE_EQ(t.nvls.bw_inter, 60);
  // Four GPUs: 5 s per GPU, 60 x 5 = 300 fits at once.
  const NcclTopology four = SearchNcclTopology(Gpu("H100-SXM"), 4);
  EXPECT_EQ(four.nvls.channels, 4);
  EXPECT_DOUBLE_EQ(four.nvls.bw_intra, 60);
}

// A100: 12 NVLinks x 20.0 = 240 GB/s. Speeds 40, 30, 20, 18: 40 fits 6 channels (240), the
// rest no more; 18 / 40 < .49 stops. 6 x 40 doubles to 12 x 20 (SM 8.0 is not above 80, so
// the "< 50 with more than 4 channels" exception does not apply). No NVLS before SM 9.0.
TEST(NcclTopology, A100NodeOfEight) {
  const NcclTopology t = SearchNcclTopology(Gpu("A100-SXM-80GB"), 8);
  EXPECT_EQ(t.ring.channels, 12);
  EXPECT_DOUBLE_EQ(t.ring.bw_intra, 20);
  EXPECT_EQ(t.tree.channels, 12);
  EXPECT_DOUBLE_EQ(t.tree.bw_intra, 20);
  EXPECT_EQ(t.nvls.channels, 0);
}

// RTX 4090 (no P2P): the ring goes through the CPU's memory (SHM). Each hop loads the
// sender's and the receiver's PCIe Gen4 x16 link (24 GB/s); AMD host, no 6/5 charge.
// Speeds 20, 18, 15 fit one channel; 12 fits two (24 GB/s, the GPU's whole link): done.
TEST(NcclTopology, Rtx4090PairGoesThroughHostMemory) {
  const NcclTopology t = SearchNcclTopology(Gpu("RTX-4090"), 2);
  EXPECT_EQ(t.transport, NcclTransport::kSharedMem);
  EXPECT_FALSE(t.nvlink);
  EXPECT_EQ(t.ring.channels, 2);
  EXPECT_DOUBLE_EQ(t.ring.bw_intra, 12);
}

// RTX PRO 6000 server: GPUs 0 and 1 share a PCIe switch, so a TP 2 pair is peer-to-peer
// at PCIe Gen5 x16 (48 GB/s): SM 12.0 uses the SM100 speeds 90 ... 18; 45 fits one
// channel, 24 fits two (48 = the GPU's link): 2 x 24. Eight GPUs over two Intel sockets:
// pairs on other switches go through the CPU (the 6/5 Intel charge on their PCIe links,
// 48 / 1.2 = 40 per channel) and across the sockets' 40 GB/s link (Emerald Rapids): one
// channel at 40, doubled to 2 x 20.
TEST(NcclTopology, RtxPro6000PairsAndNode) {
  const NcclTopology pair = SearchNcclTopology(Gpu("RTX-PRO-6000"), 2);
  EXPECT_EQ(pair.transport, NcclTransport::kPcieP2p);
  EXPECT_EQ(pair.ring.channels, 2);
  EXPECT_DOUBLE_EQ(pair.ring.bw_intra, 24);
  const NcclTopology node = SearchNcclTopology(Gpu("RTX-PRO-6000"), 8);
  EXPECT_EQ(node.transport, NcclTransport::kSharedMem);
  EXPECT_EQ(node.ring.channels, 2);
  EXPECT_DOUBLE_EQ(node.ring.bw_intra, 20);
}

// Two GPUs on separate root ports (one GPU per switch): paths.cc ncclTopoCheckP2p allows
// peer to peer between them only on an AMD host (2 GPUs); an Intel host stages through
// host memory. Two GPUs under one switch go peer to peer on either.
TEST(NcclTopology, PairOnSeparateRootPortsByHostVendor) {
  HardwareSpec own_ports = Gpu("RTX-PRO-6000");
  own_ports.intra_node.cpu.gpus_per_pcie_switch = 1;
  EXPECT_EQ(SearchNcclTopology(own_ports, 2).transport, NcclTransport::kSharedMem);
  own_ports.intra_node.cpu.vendor = "amd";
  own_ports.intra_node.cpu.model = "turin";
  EXPECT_EQ(SearchNcclTopology(own_ports, 2).transport, NcclTransport::kPcieP2pCpu);
  // More than two GPUs: the AMD rule no longer applies, so the ring stages through memory.
  EXPECT_EQ(SearchNcclTopology(own_ports, 4).transport, NcclTransport::kSharedMem);
  HardwareSpec shared = own_ports;
  shared.intra_node.cpu.gpus_per_pcie_switch = 2;
  EXPECT_EQ(SearchNcclTopology(shared, 2).transport, NcclTransport::kPcieP2p);
}

// The same server on two AMD sockets: NCCL rates the sockets' link at AMD_BW, 16 GB/s
// (topo.h), below the slowest SM100 speed (18), so no ring of eight fits and the search
// falls back to the GPUs in rank order at 0.1 GB/s (search.cc "falling back to simple
// order"; NCCL logs it on dual AMD Turin RTX PRO 6000 servers, github.com/voipmonitor/
// rtx6kpro optimization/nccl-tuning.md: "Pattern 1 ... bw 0.1/0.1"). That figure makes
// NCCL's choice -- Simple from the smallest messages, 0.1 x 8 / 14 GB/s against LL's
// half -- but the copies run at what the ring's links carry: one channel at 16 GB/s on
// the socket link. A 32 MiB all-reduce: 8.4 + 14 x 5.7 = 88.2 us of latency and
// 33,554,432 / (16 x 8 / 14) / 1000 = 3,670 us of bytes, where NCCL's own estimate says
// 587 ms. Four GPUs stay on one socket and find a ring.
TEST(NcclTopology, FallbackGraphCarriesItsLinksSpeed) {
  HardwareSpec turin = Gpu("RTX-PRO-6000");
  turin.intra_node.cpu.vendor = "amd";
  turin.intra_node.cpu.model = "turin";
  const NcclTopology node = SearchNcclTopology(turin, 8);
  EXPECT_TRUE(node.ring.fallback);
  EXPECT_EQ(node.ring.channels, 1);
  EXPECT_DOUBLE_EQ(node.ring.bw_intra, 0.1);
  EXPECT_NEAR(node.ring.bw_carried, NcclInterCpuGBs(turin.intra_node.cpu), 1e-6);
  const NcclModel nccl(node);
  const NcclChoice c = nccl.Choose(NcclCollective::kAllReduce, 32 * kMiB);
  EXPECT_EQ(c.algorithm, NcclAlgorithm::kRing);
  EXPECT_EQ(c.protocol, NcclProtocol::kSimple);
  EXPECT_EQ(nccl.Choose(NcclCollective::kAllReduce, 4 * kKiB).protocol, NcclProtocol::kSimple);
  EXPECT_NEAR(c.latency_us, 88.2, 1e-9);
  EXPECT_NEAR(c.us, 88.2 + 32.0 * kMiB / (16.0 * 8 / 14) / 1000, 1e-3);
  EXPECT_NEAR(c.estimate_us, 88.2 + 32.0 * kMiB / (0.1 * 8 / 14) / 1000, 1e-6);
  // A graph the search found is carried at its own speed.
  const NcclTopology half = SearchNcclTopology(turin, 4);
  EXPECT_FALSE(half.ring.fallback);
  EXPECT_DOUBLE_EQ(half.ring.bw_carried, half.ring.bw_intra);
  const NcclChoice found = NcclModel(half).Choose(NcclCollective::kAllReduce, 32 * kMiB);
  EXPECT_DOUBLE_EQ(found.us, found.estimate_us);
}

// tuning.cc for 8 H100 (Hopper rows, NVLink hwLat), all-reduce (14 ring steps):
//   ring LL:     6.6 + 14 x 0.6 = 15.0 us; min(141, 360 x .5) x 8 / 14 = 80.57 GB/s
//   ring LL128:  14 + 14 x 1.9 = 40.6;     min(360 x .92, 12 x 36.7) x 8 / 14 = 189.26
//   ring Simple: 8.4 + 14 x 3.4 = 56.0;    360 x 8 / 14 = 205.71
//   tree LL:     6.8 + 2 x 7 x 0.6 = 15.2; min(331.2 / 3.8, 141) x .5 = 43.58
//   NVLS Simple: 25 us;                    8 x min(40 x .85 x 7 / 8 x 2, 60) x 8 / 14 = 272
TEST(NcclModel, TuningTablesForEightH100) {
  const NcclModel m(SearchNcclTopology(Gpu("H100-SXM"), 8));
  using C = NcclCollective;
  using A = NcclAlgorithm;
  using P = NcclProtocol;
  EXPECT_DOUBLE_EQ(m.LatencyUs(C::kAllReduce, A::kRing, P::kLL), 6.6 + 14 * 0.6);
  EXPECT_DOUBLE_EQ(m.BandwidthGBs(C::kAllReduce, A::kRing, P::kLL), 141.0 * 8 / 14);
  EXPECT_DOUBLE_EQ(m.LatencyUs(C::kAllReduce, A::kRing, P::kLL128), 14 + 14 * 1.9);
  EXPECT_NEAR(m.BandwidthGBs(C::kAllReduce, A::kRing, P::kLL128), 360 * .92 * 8 / 14, 1e-9);
  EXPECT_DOUBLE_EQ(m.LatencyUs(C::kAllReduce, A::kRing, P::kSimple), 8.4 + 14 * 3.4);
  EXPECT_DOUBLE_EQ(m.BandwidthGBs(C::kAllReduce, A::kRing, P::kSimple), 360.0 * 8 / 14);
  EXPECT_DOUBLE_EQ(m.LatencyUs(C::kAllReduce, A::kTree, P::kLL), 6.8 + 2 * 7 * 0.6);
  EXPECT_NEAR(m.BandwidthGBs(C::kAllReduce, A::kTree, P::kLL), 360 * .92 / 3.8 * .5, 1e-9);
  EXPECT_DOUBLE_EQ(m.LatencyUs(C::kAllReduce, A::kNvls, P::kSimple), 25);
  EXPECT_NEAR(m.BandwidthGBs(C::kAllReduce, A::kNvls, P::kSimple), 8 * 59.5 * 8 / 14, 1e-9);
  // All-gather: 7 steps, ring only (and NVLS, whose bus bandwidth is not converted):
  //   ring Simple 8.4 + 7 x 3.4 = 32.2 us at 360 x 8 / 7; NVLS 8 x 40 x .85 x 7/8 x 7/8.
  EXPECT_DOUBLE_EQ(m.LatencyUs(C::kAllGather, A::kRing, P::kSimple), 8.4 + 7 * 3.4);
  EXPECT_DOUBLE_EQ(m.BandwidthGBs(C::kAllGather, A::kRing, P::kSimple), 360.0 * 8 / 7);
  EXPECT_EQ(m.BandwidthGBs(C::kAllGather, A::kTree, P::kSimple), 0);
  EXPECT_NEAR(m.BandwidthGBs(C::kAllGather, A::kNvls, P::kSimple), 8 * 40 * .85 * 7 / 8 * 7 / 8,
              1e-9);
}

// The pick per size. 1 MiB: ring LL 15 + 1048576 / 80,571 = 28.01 us against NVLS
// 25 + 1048576 / 272,000 = 28.86 (tree LL128, corrected by .6 at 2^14 x 64 B: 45.1).
// 64 MiB: NVLS (25 + 246.7 us) beats ring Simple (56 + 326.2 us).
TEST(NcclModel, ChoosesPerMessageSizeAsNcclDoes) {
  const NcclModel m(SearchNcclTopology(Gpu("H100-SXM"), 8));
  const NcclChoice small = m.Choose(NcclCollective::kAllReduce, 1 << 20);
  EXPECT_EQ(small.algorithm, NcclAlgorithm::kRing);
  EXPECT_EQ(small.protocol, NcclProtocol::kLL);
  EXPECT_NEAR(small.us, 15 + 1048576 / (1000 * 141.0 * 8 / 14), 1e-9);
  const NcclChoice large = m.Choose(NcclCollective::kAllReduce, 64.0 * kMiB);
  EXPECT_EQ(large.algorithm, NcclAlgorithm::kNvls);
  EXPECT_NEAR(large.us, 25 + 64.0 * kMiB / (1000 * 8 * 59.5 * 8 / 14), 1e-9);
  // A100 has no NVLS: its large all-reduces go ring Simple.
  const NcclModel a100(SearchNcclTopology(Gpu("A100-SXM-80GB"), 8));
  const NcclChoice a = a100.Choose(NcclCollective::kAllReduce, 64.0 * kMiB);
  EXPECT_EQ(a.algorithm, NcclAlgorithm::kRing);
  EXPECT_EQ(a.protocol, NcclProtocol::kSimple);
  // Over PCIe, LL128 is off (paths beyond NVLink) and the hwLat is the PCI row: ring LL
  // for 2 GPUs is 6.6 + 2 x 1.0 us.
  const NcclModel pcie(SearchNcclTopology(Gpu("RTX-4090"), 2));
  EXPECT_EQ(
      pcie.BandwidthGBs(NcclCollective::kAllReduce, NcclAlgorithm::kRing, NcclProtocol::kLL128), 0);
  EXPECT_DOUBLE_EQ(
      pcie.LatencyUs(NcclCollective::kAllReduce, NcclAlgorithm::kRing, NcclProtocol::kLL),
      6.6 + 2 * 1.0);
}

TEST(NcclModel, CostRisesWithSizeOnEveryCatalogNode) {
  for (const std::string& name : HardwareNames(HardwareCatalogDir())) {
    SCOPED_TRACE(name);
    const HardwareSpec& gpu = Gpu(name);
    for (int n = 2; n <= static_cast<int>(gpu.gpus_per_node.value); n *= 2) {
      const NcclModel m(SearchNcclTopology(gpu, n));
      for (const NcclCollective c : {NcclCollective::kAllGather, NcclCollective::kReduceScatter,
                                     NcclCollective::kAllReduce}) {
        double previous = 0;
        for (double bytes = 256; bytes <= 1 << 30; bytes *= 4) {
          const double us = m.Choose(c, bytes).us;
          EXPECT_TRUE(std::isfinite(us) && us > previous) << n << " " << bytes;
          previous = us;
        }
      }
    }
  }
}

// vLLM 0.19's communicator per size.
TEST(VllmAllReduce, H100PathsBySize) {
  // TP 8 with symmetric memory: custom all-reduce below 256 KiB (one-shot: <= 8 GPUs
  // below 256 KiB), multimem below 64 MiB, NCCL beyond.
  const VllmAllReduceRules tp8 = VllmAllReduceRulesFor(Gpu("H100-SXM"), 8, Dtype::kBfloat16);
  EXPECT_TRUE(tp8.custom_enabled);
  EXPECT_EQ(tp8.custom_max_bytes, 256 * kKiB);
  EXPECT_EQ(tp8.PathFor(128 * kKiB), VllmAllReducePath::kCustomOneShot);
  EXPECT_EQ(tp8.PathFor(256 * kKiB), VllmAllReducePath::kSymmMemMultimem);
  EXPECT_EQ(tp8.PathFor(64 * kMiB - 16), VllmAllReducePath::kSymmMemMultimem);
  EXPECT_EQ(tp8.PathFor(64 * kMiB), VllmAllReducePath::kNccl);
  // TP 2: custom (always one-shot for 2 GPUs) below min(64 MiB, 8 MiB), then two-shot
  // symmetric memory (2 is not a multimem world size on SM 9.0).
  const VllmAllReduceRules tp2 = VllmAllReduceRulesFor(Gpu("H100-SXM"), 2, Dtype::kBfloat16);
  EXPECT_EQ(tp2.custom_max_bytes, 8 * kMiB);
  EXPECT_EQ(tp2.PathFor(4 * kMiB), VllmAllReducePath::kCustomOneShot);
  EXPECT_EQ(tp2.PathFor(8 * kMiB), VllmAllReducePath::kSymmMemTwoShot);
  // fp16 tensors: symmetric memory is bf16 only, yet it still lowers the custom limit.
  const VllmAllReduceRules fp16 = VllmAllReduceRulesFor(Gpu("H100-SXM"), 8, Dtype::kFloat16);
  EXPECT_EQ(fp16.custom_max_bytes, 256 * kKiB);
  EXPECT_EQ(fp16.PathFor(1 * kMiB), VllmAllReducePath::kNccl);
  // A bad size for the custom kernel (not a multiple of 16 bytes) goes on.
  EXPECT_EQ(tp8.PathFor(1000), VllmAllReducePath::kSymmMemMultimem);
}

TEST(VllmAllReduce, A100AndPcieCards) {
  // A100 (SM 8.0): no symmetric memory; custom below 8 MiB, one-shot below 256 KiB at 8.
  const VllmAllReduceRules a100 = VllmAllReduceRulesFor(Gpu("A100-SXM-80GB"), 8, Dtype::kBfloat16);
  EXPECT_FALSE(a100.symm_mem_enabled);
  EXPECT_EQ(a100.PathFor(128 * kKiB), VllmAllReducePath::kCustomOneShot);
  EXPECT_EQ(a100.PathFor(1 * kMiB), VllmAllReducePath::kCustomTwoShot);
  EXPECT_EQ(a100.PathFor(8 * kMiB), VllmAllReducePath::kNccl);
  // 4 GPUs: one-shot below 512 KiB.
  const VllmAllReduceRules a4 = VllmAllReduceRulesFor(Gpu("A100-SXM-80GB"), 4, Dtype::kBfloat16);
  EXPECT_EQ(a4.PathFor(384 * kKiB), VllmAllReducePath::kCustomOneShot);
  // GeForce: no peer-to-peer, no custom all-reduce.
  const VllmAllReduceRules rtx = VllmAllReduceRulesFor(Gpu("RTX-4090"), 2, Dtype::kBfloat16);
  EXPECT_FALSE(rtx.custom_enabled);
  EXPECT_EQ(rtx.custom_disabled_reason, "the platform lacks GPU P2P capability");
  EXPECT_EQ(rtx.PathFor(64 * kKiB), VllmAllReducePath::kNccl);
  // RTX PRO 6000: P2P over PCIe; 2 GPUs allowed, 4 refused ("PCIe-only").
  const VllmAllReduceRules pro2 = VllmAllReduceRulesFor(Gpu("RTX-PRO-6000"), 2, Dtype::kBfloat16);
  EXPECT_EQ(pro2.PathFor(64 * kKiB), VllmAllReducePath::kCustomOneShot);
  const VllmAllReduceRules pro4 = VllmAllReduceRulesFor(Gpu("RTX-PRO-6000"), 4, Dtype::kBfloat16);
  EXPECT_FALSE(pro4.custom_enabled);
  EXPECT_EQ(pro4.custom_disabled_reason, "not supported on more than two PCIe-only GPUs");
  // An odd world size.
  EXPECT_FALSE(VllmAllReduceRulesFor(Gpu("H100-SXM"), 3, Dtype::kBfloat16).custom_enabled);
}

// The kernel models, with round constants: a 128 KiB one-shot on 8 H100 reads 7 x 128 KiB
// at .5 x 370.8 GB/s after a 5 us fixed cost.
TEST(CollectiveModel, KernelModelsAndTheirChoice) {
  CollectiveConstants c = CollectiveConstants::Uncalibrated();
  c.custom_latency_s = 5e-6;
  c.custom_bandwidth_fraction = 0.5;
  c.symm_mem_latency_s = 10e-6;
  c.symm_mem_bandwidth_fraction = 0.25;
  const CollectiveModel tp8(Gpu("H100-SXM"), 8, Dtype::kBfloat16, c);
  const double rate = 0.5 * 370.8 * 1e3;  // bytes per us
  EXPECT_NEAR(tp8.AllReduceUs(128 * kKiB), 5 + 7 * 131072 / rate, 1e-9);
  EXPECT_NEAR(tp8.CustomAllReduceUs(1e6, false), 10 + 2 * 7.0 / 8 * 1e6 / rate, 1e-9);
  // Multimem at 1 MiB: 10 us, the buffer at .25 x 370.8 GB/s, two copies at 3.35 TB/s.
  const double mm = 10 + 1048576 / (0.25 * 370.8e3) + 2 * 1048576 / 3.35e12 * 1e6;
  EXPECT_NEAR(tp8.AllReduceUs(1 * kMiB), mm, 1e-9);
  // Beyond symmetric memory: NCCL's estimate as it is (uncalibrated).
  const NcclModel nccl(SearchNcclTopology(Gpu("H100-SXM"), 8));
  EXPECT_NEAR(tp8.AllReduceUs(128 * kMiB), nccl.Choose(NcclCollective::kAllReduce, 128.0 * kMiB).us,
              1e-9);
  // One rank: nothing.
  EXPECT_EQ(CollectiveModel().AllReduceUs(1 << 20), 0);
  EXPECT_EQ(CollectiveModel(Gpu("H100-SXM"), 1, Dtype::kBfloat16).AllReduceUs(1 << 20), 0);
}

// A ring's chunk passes (NCCL's runRing): 2n - 1 for an all-reduce, n for an all-gather or
// reduce-scatter, the last sending nothing. The bandwidth term grows by the local pass over
// the sending ones: at 2 GPUs of an A100 node (no NVLS: rings) with a local pass of 0.5,
// 1.5 x NCCL's for an all-gather, 1.25 x for an all-reduce; at 8, 7.5 / 7 and 14.5 / 14.
// NVLS, the tree and the rooted rings (whose last rank copies while the root sends the next
// chunk) keep NCCL's.
TEST(CollectiveModel, RingBandwidthTermCountsTheLocalPass) {
  CollectiveConstants c = CollectiveConstants::Uncalibrated();
  c.nccl_ring_local_pass = 0.5;
  for (const int n : {2, 8}) {
    const CollectiveModel model(Gpu("A100-SXM-80GB"), n, Dtype::kBfloat16, c);
    const NcclModel& nccl = *model.nccl();
    const auto bandwidth_term = [&](NcclCollective op, double bytes) {
      const NcclChoice choice = nccl.Choose(op, bytes);
      return bytes / (1000 * choice.bandwidth_gbs);
    };
    const double bytes = 64.0 * kMiB;
    const auto expect = [&](NcclCollective op, double factor) {
      const NcclChoice choice = nccl.Choose(op, bytes);
      EXPECT_NEAR(model.NcclUs(op, bytes), choice.latency_us + factor * bandwidth_term(op, bytes),
                  1e-9)
          << NameOf(op) << " " << n << " GPUs, " << NameOf(choice.algorithm);
    };
    ASSERT_EQ(nccl.Choose(NcclCollective::kAllGather, bytes).algorithm, NcclAlgorithm::kRing);
    expect(NcclCollective::kAllGather, (n - 1 + 0.5) / (n - 1));
    expect(NcclCollective::kReduceScatter, (n - 1 + 0.5) / (n - 1));
    ASSERT_EQ(nccl.Choose(NcclCollective::kAllReduce, bytes).algorithm, NcclAlgorithm::kRing);
    expect(NcclCollective::kAllReduce, (2 * (n - 1) + 0.5) / (2 * (n - 1)));
    expect(NcclCollective::kBroadcast, 1.0);
  }
}

// Broadcast and reduce (vLLM's uneven all-gather and reduce-scatter): ring only, one ring step
// of bandwidth (algorithm bandwidth = bus bandwidth, nsteps = nRanks) and, on a node's
// identical channels, one hop of latency. RTX PRO 6000 pair: 2 channels x 24 GB/s over PCIe.
TEST(NcclModel, BroadcastAndReduceAreOneRingPass) {
  const NcclModel pair(SearchNcclTopology(Gpu("RTX-PRO-6000"), 2));
  for (const NcclCollective c : {NcclCollective::kBroadcast, NcclCollective::kReduce}) {
    EXPECT_DOUBLE_EQ(pair.BandwidthGBs(c, NcclAlgorithm::kRing, NcclProtocol::kSimple), 48);
    EXPECT_DOUBLE_EQ(pair.LatencyUs(c, NcclAlgorithm::kRing, NcclProtocol::kSimple), 8.4 + 5.7);
    // LL: half the bus bandwidth (under the Blackwell cap), its PCIe hop 1.0 us.
    EXPECT_DOUBLE_EQ(pair.BandwidthGBs(c, NcclAlgorithm::kRing, NcclProtocol::kLL), 24);
    EXPECT_DOUBLE_EQ(pair.LatencyUs(c, NcclAlgorithm::kRing, NcclProtocol::kLL), 6.6 + 1.0);
    EXPECT_EQ(pair.BandwidthGBs(c, NcclAlgorithm::kTree, NcclProtocol::kSimple), 0);
    EXPECT_EQ(pair.Choose(c, 64.0 * kMiB).algorithm, NcclAlgorithm::kRing);
  }
  // The all-gather of the same bytes moves half of them over each link direction.
  EXPECT_DOUBLE_EQ(
      pair.BandwidthGBs(NcclCollective::kAllGather, NcclAlgorithm::kRing, NcclProtocol::kSimple),
      96);
  EXPECT_EQ(NameOf(NcclCollective::kBroadcast), "broadcast");
  EXPECT_EQ(NameOf(NcclCollective::kReduce), "reduce");
}

// Expert parallelism: dispatch all-gathers the hidden states and the router logits (bf16,
// one per expert); combine reduce-scatters the hidden states.
TEST(CollectiveModel, ExpertParallelExchange) {
  const CollectiveModel ep2(Gpu("H100-SXM"), 2, Dtype::kBfloat16,
                            CollectiveConstants::Uncalibrated());
  const double tokens = 512, hidden = 2048, experts = 128;
  const double dispatch = tokens * (hidden + experts) * 2;
  const double combine = tokens * hidden * 2;
  EXPECT_EQ(CollectiveModel::ExpertDispatchBytes(512, 2048, 128, 2), 512 * 2176 * 2);
  EXPECT_NEAR(ep2.ExpertDispatchCombineUs(512, 2048, 128),
              ep2.NcclUs(NcclCollective::kAllGather, dispatch) +
                  ep2.NcclUs(NcclCollective::kReduceScatter, combine),
              1e-9);
  // The all-to-all form: twice (dispatch and combine) 256 tokens x 8 copies x 4 KiB.
  EXPECT_NEAR(ep2.ExpertAllToAllUs(512, 2048, 8), 2 * ep2.AllToAllUs(256 * 8 * 2048 * 2.0), 1e-9);
  EXPECT_EQ(ep2.ExpertDispatchCombineUs(0, 2048, 128), 0);
}

// Per-rank counts: equal ones are the all-gather and reduce-scatter; unequal ones a group
// of broadcasts and one of reduces, rooted at each rank (vLLM's all_gatherv and
// reduce_scatterv), paying the longest latency once and every root's bytes.
TEST(CollectiveModel, UnequalExpertExchangeIsRootedGroups) {
  const CollectiveModel ep2(Gpu("RTX-PRO-6000"), 2, Dtype::kBfloat16);
  const int64_t equal[] = {256, 256};
  EXPECT_DOUBLE_EQ(ep2.ExpertDispatchCombineUs(equal, 2048, 128),
                   ep2.ExpertDispatchCombineUs(512, 2048, 128));
  const CollectiveConstants k;
  const NcclModel& nccl = *ep2.nccl();
  const auto group = [&](NcclCollective c, std::initializer_list<double> bytes) {
    double latency = 0, transfer = 0;
    for (const double b : bytes) {
      const NcclChoice choice = nccl.Choose(c, b);
      latency = std::max(latency, choice.latency_us);
      transfer += b / (1000 * choice.bandwidth_gbs);
    }
    return k.nccl_latency_scale * latency + transfer / k.nccl_bandwidth_efficiency;
  };
  // A 1,417-token prefill beside 47 decodes: 2 x 2,176 and 2 x 2,048 bytes a token.
  const int64_t uneven[] = {1417, 47};
  const double expected = group(NcclCollective::kBroadcast, {1417 * 4352.0, 47 * 4352.0}) +
                          group(NcclCollective::kReduce, {1417 * 4096.0, 47 * 4096.0});
  EXPECT_NEAR(ep2.ExpertDispatchCombineUs(uneven, 2048, 128), expected, 1e-9);
  // The big rank's share crosses alone: twice the bytes one way of the balanced exchange
  // of as many tokens, whose all-gather moves half of them each way but pays its ring's
  // local pass (1 + nccl_ring_local_pass, about 1.5, at 2 ranks; a rooted ring's last rank
  // copies while the root sends the next chunk): about 4/3 of it.
  const double balanced = ep2.ExpertDispatchCombineUs(1464, 2048, 128);
  EXPECT_GT(ep2.ExpertDispatchCombineUs(uneven, 2048, 128), 1.2 * balanced);
  EXPECT_LT(ep2.ExpertDispatchCombineUs(uneven, 2048, 128), 1.45 * balanced);
  // One rank: nothing to exchange.
  const int64_t one[] = {100};
  EXPECT_EQ(CollectiveModel(Gpu("RTX-PRO-6000"), 1, Dtype::kBfloat16)
                .ExpertDispatchCombineUs(one, 2048, 128),
            0);
}

}  // namespace
}  // namespace fleetsim
