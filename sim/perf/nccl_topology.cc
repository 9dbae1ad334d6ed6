#include "perf/nccl_topology.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <map>
#include <stdexcept>
#include <utility>
#include <vector>

namespace fleetsim {
namespace {

// src/include/device.h MAXCHANNELS (64 in 2.29); init.cc gives the ring graph
// MAXCHANNELS / 2 and NVLS at most NCCL_MAX_NVLS_ARITY (32) heads.
constexpr int kMaxChannels = 64;
constexpr int kMaxNvlsArity = 32;

// search.cc: the per-channel speeds the search tries, fastest first (single node).
const std::vector<double>& SpeedArray(int cc) {
  static const std::vector<double> intra = {40.0, 30.0, 20.0, 18.0, 15.0, 12.0, 10.0,
                                            9.0,  7.0,  6.0,  5.0,  4.0,  3.0};
  static const std::vector<double> sm90 = {60.0, 50.0, 40.0, 30.0, 24.0, 20.0,
                                           15.0, 12.0, 11.0, 6.0,  3.0};
  static const std::vector<double> sm100 = {90.0, 80.0, 70.0, 60.0, 50.0, 45.0,
                                            40.0, 30.0, 24.0, 20.0, 19.0, 18.0};
  return cc >= 100 ? sm100 : cc >= 90 ? sm90 : intra;
}

enum class Pattern { kRing, kTree, kNvls };

// Whether `channels` channels at `speed` GB/s each fit the links.
using Fits = std::function<bool(int channels, double speed)>;

// The most channels up to `most` that fit at `speed` (fitting is monotone in channels).
int ChannelsAt(const Fits& fits, double speed, int most) {
  int n = 0;
  while (n < most && fits(n + 1, speed))
    ++n;
  return n;
}

// ncclTopoCompute's two passes on a symmetric layout. Pass 1 starts at the fastest speed
// within the best path (and total bandwidth over the minimum channels) and walks down the
// speed array while the next speed is above .49 of the best found, keeping the graph with
// the most channels x speed, stopping at a perfect graph (maxChannels, or the GPU's whole
// bandwidth). ncclTopoDupChannels then doubles rings and trees of fast channels; pass 2
// raises the speed while the channels still fit (for NVLS, the inter-node speed only).
NcclGraph Search(Pattern pattern, int cc, int ranks, double max_bw, double total_bw,
                 int min_channels, int max_channels, const Fits& fits) {
  const std::vector<double>& speeds = SpeedArray(cc);
  const auto at = [&speeds](int k) { return speeds[static_cast<std::size_t>(k)]; };
  const int last = static_cast<int>(speeds.size()) - 1;
  if (pattern != Pattern::kRing) total_bw *= ranks * 1.0 / (ranks - 1);
  int i = 0;
  while ((at(i) > max_bw || at(i) * min_channels > total_bw) && i < last)
    ++i;
  NcclGraph best;
  while (true) {
    const int n = ChannelsAt(fits, at(i), max_channels);
    if (n >= min_channels && n * at(i) > best.channels * best.bw_intra) {
      best = {n, at(i), at(i)};
    }
    if (best.channels == max_channels || best.channels * best.bw_inter >= total_bw) break;
    if (i < last && (best.channels == 0 || at(i + 1) / best.bw_inter > .49)) {
      ++i;
      continue;
    }
    break;
  }
  if (best.channels == 0) {
    // "Could not find a path": one channel at 0.1 GB/s (search.cc, the simple order); it
    // carries what fits the links, found by bisection (fitting is monotone in speed), and
    // no less than NCCL's figure.
    double lo = 0, hi = max_bw;
    for (int step = 0; step < 60; ++step) {
      const double mid = (lo + hi) / 2;
      (fits(1, mid) ? lo : hi) = mid;
    }
    return {.channels = 1,
            .bw_intra = 0.1,
            .bw_inter = 0.1,
            .bw_carried = std::max(lo, 0.1),
            .fallback = true};
  }
  if (pattern == Pattern::kNvls) {
    int j = 0;
    while (at(j) > best.bw_inter && j < last)
      ++j;
    while (j > 0 && best.bw_inter < 2 * best.bw_intra)
      best.bw_inter = at(--j);
    best.bw_carried = best.bw_intra;
    return best;
  }
  // ncclTopoDupChannels.
  if (best.bw_intra >= 25.0 && !(cc > 80 && best.bw_intra < 50.0 && best.channels > 4)) {
    const int dup = std::min(best.channels * 2, max_channels);
    const double divisor = std::ceil(static_cast<double>(dup) / best.channels);
    best = {dup, best.bw_intra / divisor, best.bw_inter / divisor};
  }
  int j = 0;
  while (at(j) > best.bw_inter && j < last)
    ++j;
  while (j > 0 && fits(best.channels, at(j - 1))) {
    --j;
    best.bw_intra = best.bw_inter = at(j);
  }
  best.bw_carried = best.bw_intra;
  return best;
}

// The directed PCIe links of a node and how much of a channel each carries.
class PcieLoads {
 public:
  PcieLoads(const IntraNodeSpec& node, int gpus_per_node, int ranks)
      : node_(node), per_socket_(gpus_per_node / node.cpu.sockets), ranks_(ranks) {
    gpu_bw_ = NcclPcieGBs(node.pcie.generation, node.pcie.lanes);
    cpu_bw_ = NcclInterCpuGBs(node.cpu);
  }

  int Socket(int g) const { return g / per_socket_; }
  int Switch(int g) const { return g / node_.cpu.gpus_per_pcie_switch; }
  bool SharesSwitch(int a, int b) const {
    return node_.cpu.gpus_per_pcie_switch > 1 && Switch(a) == Switch(b);
  }
  // paths.cc ncclTopoCheckP2p: P2P up to PATH_PXB (one PCIe switch), or any path between
  // 2 GPUs on an AMD host; and only where the driver allows peer access.
  bool P2p(int a, int b) const {
    if (!node_.p2p) return false;
    return SharesSwitch(a, b) || (node_.cpu.vendor == "amd" && ranks_ <= 2);
  }
  // How the hops travel: through host memory if any hop must, else peer to peer, through
  // the CPU if any hop leaves its switch.
  NcclTransport Transport(const std::vector<std::pair<int, int>>& hops) const {
    NcclTransport transport = NcclTransport::kPcieP2p;
    for (const auto& [a, b] : hops) {
      if (!P2p(a, b)) return NcclTransport::kSharedMem;
      if (!SharesSwitch(a, b)) transport = NcclTransport::kPcieP2pCpu;
    }
    return transport;
  }

  // Adds a hop a -> b to the link loads: through the shared switch when P2P, else up to
  // b's CPU and down (paths.cc addInterStep), crossing sockets on the SMP link. search.cc
  // followPath charges 6/5 on PCI links of a PATH_PHB path through an Intel CPU.
  void AddHop(int a, int b) {
    const bool via_cpu = !(P2p(a, b) && SharesSwitch(a, b));
    const bool cross = Socket(a) != Socket(b);
    const double pci = (via_cpu && !cross && node_.cpu.vendor == "intel") ? 6.0 / 5.0 : 1.0;
    load_[{"gpu_up", a}] += pci;
    load_[{"gpu_down", b}] += pci;
    if (!via_cpu) return;
    if (node_.cpu.gpus_per_pcie_switch > 1) {
      load_[{"switch_up", Switch(a)}] += pci;
      load_[{"switch_down", Switch(b)}] += pci;
    }
    if (cross) load_[{"cpu", Socket(a) * 64 + Socket(b)}] += 1;
  }

  bool Fits(int channels, double speed) const {
    for (const auto& [link, load] : load_) {
      const double bw = link.first == "cpu" ? cpu_bw_ : gpu_bw_;
      if (channels * speed * load > bw + 1e-9) return false;
    }
    return true;
  }

  // The narrowest link of the path a -> b (its bandwidth, as paths.cc sets path->bw).
  double PathBw(int a, int b) const {
    const bool via_cpu = !(P2p(a, b) && SharesSwitch(a, b));
    return via_cpu && Socket(a) != Socket(b) ? std::min(gpu_bw_, cpu_bw_) : gpu_bw_;
  }
  double gpu_bw() const { return gpu_bw_; }

 private:
  const IntraNodeSpec& node_;
  int per_socket_;
  int ranks_;
  double gpu_bw_ = 0;
  double cpu_bw_ = 0;
  std::map<std::pair<std::string, int>, double> load_;
};

std::vector<std::pair<int, int>> RingHops(int ranks, bool closed) {
  std::vector<std::pair<int, int>> hops;
  for (int g = 0; g + 1 < ranks; ++g)
    hops.emplace_back(g, g + 1);
  if (closed) hops.emplace_back(ranks - 1, 0);
  return hops;
}

}  // namespace

double NcclNvlinkGBs(int cc) {
  if (cc >= 100) return 40.1;  // SM100_NVLINK_BW
  if (cc >= 90) return 20.6;   // SM90_NVLINK_BW
  if (cc == 86) return 12.0;   // SM86_NVLINK_BW
  if (cc >= 70) return 20.0;   // SM80_NVLINK_BW, SM70_NVLINK_BW
  if (cc >= 60) return 18.0;   // SM60_NVLINK_BW
  return 20.0;
}

double NcclPcieGBs(int generation, int lanes) {
  // topo.cc kvDictPciGen: per-lane speed in units of 100 Mb/s, 2.5 to 64 GT/s.
  static const std::map<int, double> speed = {{1, 15},  {2, 30},  {3, 60},
                                              {4, 120}, {5, 240}, {6, 480}};
  const auto it = speed.find(generation);
  return lanes * (it == speed.end() ? 60.0 : it->second) / 80.0;
}

double NcclInterCpuGBs(const HostCpuSpec& cpu) {
  if (cpu.vendor == "amd") return 16.0;                                    // AMD_BW
  if (cpu.model == "emerald-rapids") return 40.0;                          // ERP_QPI_BW
  if (cpu.model == "sapphire-rapids") return 22.0;                         // SRP_QPI_BW
  if (cpu.model == "skylake" || cpu.model == "cascade-lake") return 10.0;  // SKL_QPI_BW
  return 6.0;                                                              // BDW_QPI_BW
}

NcclTopology SearchNcclTopology(const HardwareSpec& hardware, int ranks) {
  const IntraNodeSpec& node = hardware.intra_node;
  const int gpus_per_node = static_cast<int>(hardware.gpus_per_node.value);
  if (ranks < 2 || ranks > gpus_per_node) {
    throw std::invalid_argument("SearchNcclTopology: " + std::to_string(ranks) +
                                " GPUs on a node of " + std::to_string(gpus_per_node));
  }
  NcclTopology t;
  t.ranks = ranks;
  t.compute_capability = hardware.compute_capability > 0 ? hardware.compute_capability : 80;
  const int cc = t.compute_capability;
  const int ring_max = kMaxChannels / 2;

  if (node.topology == "switch") {
    // Each GPU's NVLinks to the NVSwitches: count x NCCL's per-link figure.
    const double gpu_bw = node.links->count * NcclNvlinkGBs(cc);
    t.transport = NcclTransport::kNvlink;
    t.nvlink = true;
    t.max_bw = t.total_bw = gpu_bw;
    const Fits chain = [gpu_bw](int n, double s) { return n * s <= gpu_bw + 1e-9; };
    t.ring = Search(Pattern::kRing, cc, ranks, t.max_bw, t.total_bw, 1, ring_max, chain);
    t.tree = Search(Pattern::kTree, cc, ranks, t.max_bw, t.total_bw, t.ring.channels,
                    t.ring.channels, chain);
    if (node.nvls && cc >= 90) {
      // NVLS pulls evenly from every GPU: one channel headed by each, the head's traffic
      // twice (search.cc ncclTopoSearchTryNvls).
      const int heads = std::min(kMaxNvlsArity, ranks);
      const Fits nvls = [gpu_bw, ranks](int /*channels*/, double s) {
        return (ranks + 1) * s <= gpu_bw + 1e-9;
      };
      t.nvls = Search(Pattern::kNvls, cc, ranks, t.max_bw, t.total_bw, heads, heads, nvls);
    }
    return t;
  }
  if (node.topology == "mesh") {
    // A link (or several) to each peer; links to GPUs outside the group are not in the
    // communicator's topology (topo.cc ncclTopoAddNvLinks skips them).
    const double per_link = node.links->bandwidth_bytes_per_s
                                ? node.links->bandwidth_bytes_per_s->value / 1e9
                                : NcclNvlinkGBs(cc);
    const int per_peer = std::max(1, node.links->count / std::max(1, gpus_per_node - 1));
    const double pair_bw = per_peer * per_link;
    t.transport = NcclTransport::kNvlink;
    t.nvlink = true;
    t.max_bw = pair_bw;
    t.total_bw = (ranks - 1) * pair_bw;
    // A directed complete graph splits into ranks - 1 directed Hamiltonian rings, so the
    // channels share the group's peer links.
    const Fits fits = [pair_bw, ranks](int n, double s) {
      return s <= pair_bw + 1e-9 && n * s <= (ranks - 1) * pair_bw + 1e-9;
    };
    t.ring = Search(Pattern::kRing, cc, ranks, t.max_bw, t.total_bw, 1, ring_max, fits);
    t.tree = Search(Pattern::kTree, cc, ranks, t.max_bw, t.total_bw, t.ring.channels,
                    t.ring.channels, fits);
    return t;
  }
  // PCIe: ring 0 -> 1 -> ... -> N-1 -> 0, tree the same chain without the closing hop.
  PcieLoads ring_loads(node, gpus_per_node, ranks);
  PcieLoads tree_loads(node, gpus_per_node, ranks);
  const auto ring_hops = RingHops(ranks, true);
  for (const auto& [a, b] : ring_hops)
    ring_loads.AddHop(a, b);
  for (const auto& [a, b] : RingHops(ranks, false))
    tree_loads.AddHop(a, b);
  t.transport = ring_loads.Transport(ring_hops);
  t.nvlink = false;
  for (int a = 0; a < ranks; ++a) {
    for (int b = 0; b < ranks; ++b)
      if (a != b) t.max_bw = std::max(t.max_bw, ring_loads.PathBw(a, b));
  }
  t.total_bw = ring_loads.gpu_bw();
  const Fits ring_fits = [&ring_loads](int n, double s) { return ring_loads.Fits(n, s); };
  const Fits tree_fits = [&tree_loads](int n, double s) { return tree_loads.Fits(n, s); };
  t.ring = Search(Pattern::kRing, cc, ranks, t.max_bw, t.total_bw, 1, ring_max, ring_fits);
  t.tree = Search(Pattern::kTree, cc, ranks, t.max_bw, t.total_bw, t.ring.channels, t.ring.channels,
                  tree_fits);
  return t;
}

}  // namespace fleetsim
