#include "perf/nccl_model.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstddef>

namespace fleetsim {
namespace {

constexpr int kTree = 0, kRing = 1, kNvls = 2;
constexpr int kLL = 0, kLL128 = 1, kSimple = 2;

// tuning.cc ncclTunerConstantsDefaults (NCCL 2.29.2), the rows fleetsim uses.
constexpr double kBaseLatency[3][3] = {{6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}, {0, 0, 0}};
// hwLatencies[NVLINK] and [PCI]: Tree, Ring, NVLS x LL, LL128, Simple.
constexpr double kHwLatencyNvlink[3][3] = {{.6, 1.25, 4.0}, {.6, 1.9, 3.4}, {0, 0, 25}};
constexpr double kHwLatencyPci[3][3] = {{1.0, 1.9, 4.0}, {1.0, 2.5, 5.7}, {0, 0, 0}};
// By compute-capability index (Volta, Ampere, Hopper, Blackwell), one node.
constexpr double kLlMaxBw[4] = {39.0, 87.7, 141.0, 2 * 141.0};
constexpr double kPerChMaxRingLL128Bw[4] = {20.0, 20.0, 36.7, 34.5};
constexpr double kPerChMaxTreeLL128Bw[4] = {20.0, 20.0, 36.7, 55.6};
constexpr double kPerChMaxTreeBw[4] = {26.5, 24.0, 38.7, 70.0};
constexpr double kNvlsEfficiency[4] = {0.0, 0.0, 0.85, 0.74};
// tuning.cc treeCorrectionFactor: powers of two from 64 B.
constexpr double kTreeCorrection[3][24] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7,  .7,  .7,  .6,  .5,
     .4,  .4,  .5,  .6,  .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7,  .6,  .6,
     .6,  .6,  .6,  .6,  .8,  .9, .9, .9, .9, 1.0, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5,
     .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9}};
// enqueue.cc NCCL_P2P_LL_THRESHOLD.
constexpr double kP2pLlThreshold = 16384;

int CompCapIndex(int cc) {
  return cc >= 100 ? 3 : cc >= 90 ? 2 : cc >= 80 ? 1 : 0;
}

// log2i(nBytes >> 6): floor(log2), -1 for 0.
int LogSize(double bytes) {
  const auto units = static_cast<long long>(bytes) >> 6;
  if (units <= 0) return -1;
  int log = 0;
  for (long long v = units; v > 1; v >>= 1)
    ++log;
  return log;
}

std::size_t Index(NcclCollective c, int a, int p) {
  return static_cast<std::size_t>((static_cast<int>(c) * 3 + a) * 3 + p);
}

}  // namespace

std::string_view NameOf(NcclCollective collective) {
  switch (collective) {
    case NcclCollective::kAllGather:
      return "all_gather";
    case NcclCollective::kReduceScatter:
      return "reduce_scatter";
    case NcclCollective::kAllReduce:
      return "all_reduce";
    case NcclCollective::kBroadcast:
      return "broadcast";
    case NcclCollective::kReduce:
      return "reduce";
  }
  return "?";
}

std::string_view NameOf(NcclAlgorithm algorithm) {
  switch (algorithm) {
    case NcclAlgorithm::kTree:
      return "tree";
    case NcclAlgorithm::kRing:
      return "ring";
    case NcclAlgorithm::kNvls:
      return "nvls";
  }
  return "?";
}

std::string_view NameOf(NcclProtocol protocol) {
  switch (protocol) {
    case NcclProtocol::kLL:
      return "LL";
    case NcclProtocol::kLL128:
      return "LL128";
    case NcclProtocol::kSimple:
      return "Simple";
  }
  return "?";
}

double& NcclModel::Lat(NcclCollective c, NcclAlgorithm a, NcclProtocol p) {
  return latency_[Index(c, static_cast<int>(a), static_cast<int>(p))];
}
double& NcclModel::Bw(NcclCollective c, NcclAlgorithm a, NcclProtocol p) {
  return bandwidth_[Index(c, static_cast<int>(a), static_cast<int>(p))];
}
double NcclModel::LatencyUs(NcclCollective c, NcclAlgorithm a, NcclProtocol p) const {
  return latency_[Index(c, static_cast<int>(a), static_cast<int>(p))];
}
double NcclModel::BandwidthGBs(NcclCollective c, NcclAlgorithm a, NcclProtocol p) const {
  return bandwidth_[Index(c, static_cast<int>(a), static_cast<int>(p))];
}

int NcclModel::RingSteps(NcclCollective collective, int ranks) {
  switch (collective) {
    case NcclCollective::kAllReduce:
      return 2 * (ranks - 1);
    case NcclCollective::kBroadcast:
    case NcclCollective::kReduce:
      return ranks;
    case NcclCollective::kAllGather:
    case NcclCollective::kReduceScatter:
      return ranks - 1;
  }
  return ranks - 1;
}

// ncclTopoTuneModel for one node (nNodes = 1: the graphs' intra bandwidth, no network
// steps, NVLS Tree and PAT disabled, no CollNet).
NcclModel::NcclModel(const NcclTopology& topology)
    : topology_(topology), fallback_(topology.ring.fallback || topology.tree.fallback) {
  const int n = topology.ranks;
  const int ci = CompCapIndex(topology.compute_capability);
  const auto& hw_latency = topology.nvlink ? kHwLatencyNvlink : kHwLatencyPci;
  const NcclGraph* graphs[3] = {&topology.tree, &topology.ring, &topology.nvls};
  // LL128 is on by default only where every intra-node path is NVLink (typeIntra <=
  // PATH_NVB) on one compute capability.
  const bool ll128 = topology.nvlink;
  for (const NcclCollective coll :
       {NcclCollective::kAllGather, NcclCollective::kReduceScatter, NcclCollective::kAllReduce,
        NcclCollective::kBroadcast, NcclCollective::kReduce}) {
    const bool all_reduce = coll == NcclCollective::kAllReduce;
    const bool rooted = coll == NcclCollective::kBroadcast || coll == NcclCollective::kReduce;
    const int nsteps = RingSteps(coll, n);
    for (int a = 0; a < 3; ++a) {
      if (!all_reduce && a == kTree) continue;  // all-gather, reduce-scatter: ring, NVLS (PAT off)
      if (rooted && a != kRing) continue;       // broadcast, reduce: ring only
      const NcclGraph& g = *graphs[a];
      for (int p = 0; p < 3; ++p) {
        if (a == kNvls && p != kSimple) continue;
        if (a == kNvls && g.channels < 2) continue;  // NVLS needs at least 2 channels
        // The bus bandwidth of the graph at `speed` per channel, to algorithm bandwidth.
        const auto bus_at = [&](double speed) {
          double bw = speed;
          if (a == kNvls) {
            double intra = speed * kNvlsEfficiency[ci] * (g.channels - 1) / g.channels;
            intra *= all_reduce ? 2.0 : (n - 1.0) / n;  // all-reduce pipelines two operations
            bw = std::min(intra, g.bw_inter);
          }
          double bus = g.channels * bw;
          if (a == kRing && p == kLL) bus = std::min(kLlMaxBw[ci], bus * .5);
          if (a == kRing && p == kLL128)
            bus = std::min(bus * 0.92, g.channels * kPerChMaxRingLL128Bw[ci]);
          if (a == kTree && all_reduce) bus = std::min(bus * .92, g.channels * kPerChMaxTreeBw[ci]);
          if (a == kTree && p == kLL) bus = std::min(bus * 1.0 / 3.8, kLlMaxBw[ci]);
          if (a == kTree && p == kLL128)
            bus = std::min(bus * 7.0 / 9.0, g.channels * kPerChMaxTreeLL128Bw[ci]);
          // Bus bandwidth to algorithm bandwidth (all-gather and reduce-scatter by NVLS stay).
          if (!(a != kRing && !all_reduce)) bus *= (a == kTree) ? .5 : 1.0 * n / nsteps;
          if (p == kLL128 && !ll128) bus = 0;
          return bus;
        };
        const auto algo = static_cast<NcclAlgorithm>(a);
        const auto proto = static_cast<NcclProtocol>(p);
        Bw(coll, algo, proto) = bus_at(g.bw_intra);
        carried_[Index(coll, a, p)] = bus_at(g.bw_carried);
        const double intra = hw_latency[a][p];
        double lat = kBaseLatency[a][p];
        // A rooted ring on channels that are all the same ring (sameChannels, what a node's
        // search settles on) pays one hop's latency: the chunks pipeline down it.
        if (a == kRing) lat += rooted ? intra : nsteps * intra;
        if (a == kTree) lat += 2 * ((n - 1) * intra);
        if (a == kNvls) lat = intra;
        Lat(coll, algo, proto) = lat;
      }
    }
  }
}

NcclChoice NcclModel::Choose(NcclCollective collective, double bytes, bool nvls_type) const {
  const bool nvls = nvls_type || collective == NcclCollective::kAllGather;
  NcclChoice best;
  double best_time = FLT_MAX;
  const int log_size = LogSize(bytes);
  for (int a = 0; a < 3; ++a) {
    for (int p = 0; p < 3; ++p) {
      const auto algo = static_cast<NcclAlgorithm>(a);
      const auto proto = static_cast<NcclProtocol>(p);
      double bw = BandwidthGBs(collective, algo, proto);
      if (bw <= 0 || (a == kNvls && !nvls)) continue;
      if (a == kTree && collective == NcclCollective::kAllReduce && log_size >= 0 &&
          log_size < 23) {
        bw *= kTreeCorrection[p][log_size];
      }
      const double lat = LatencyUs(collective, algo, proto);
      const double time = lat + bytes / (1000 * bw);
      if (time < best_time) {
        best_time = time;
        best = {algo, proto, lat, bw, time, time};
      }
    }
  }
  // NCCL's estimate made the choice; a fallback graph carries more than it says.
  if (fallback_ && best.bandwidth_gbs > 0) {
    const std::size_t i =
        Index(collective, static_cast<int>(best.algorithm), static_cast<int>(best.protocol));
    best.bandwidth_gbs *= carried_[i] / bandwidth_[i];
    best.us = best.latency_us + bytes / (1000 * best.bandwidth_gbs);
  }
  return best;
}

NcclChoice NcclModel::AllToAll(double bytes) const {
  const int n = topology_.ranks;
  const int ci = CompCapIndex(topology_.compute_capability);
  const bool ll = bytes / n <= kP2pLlThreshold;
  const int p = ll ? kLL : kSimple;
  const auto& hw_latency = topology_.nvlink ? kHwLatencyNvlink : kHwLatencyPci;
  double bus = topology_.ring.channels * topology_.ring.bw_carried;
  if (ll) bus = std::min(kLlMaxBw[ci], bus * .5);
  NcclChoice c;
  c.algorithm = NcclAlgorithm::kRing;
  c.protocol = static_cast<NcclProtocol>(p);
  c.latency_us = kBaseLatency[kRing][p] + hw_latency[kRing][p];
  c.bandwidth_gbs = bus * n / (n - 1.0);
  c.us = c.estimate_us = c.latency_us + bytes / (1000 * c.bandwidth_gbs);
  return c;
}

}  // namespace fleetsim
