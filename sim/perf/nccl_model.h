// NCCL's own performance model of a collective on one node, and its choice of algorithm
// and protocol per message size: the latency and bandwidth tables of
// src/graph/tuning.cc (ncclTopoTuneModel: base latencies, per-hop hwLat per link type,
// per-channel bandwidth caps, the LL / LL128 / Simple efficiencies, NVLS's efficiency),
// the time of one algorithm (ncclTopoGetAlgoTime: latency + bytes / bandwidth, with the
// tree correction factors) and the pick of the cheapest (src/enqueue.cc
// topoGetAlgoInfo). NCCL 2.29.2, single node, no CollNet; PAT is off on one node.
//
// NCCL uses this model to choose; fleetsim also reads its time as the cost, corrected by
// two constants fitted on one system's measured nccl-tests tables (CollectiveConstants in
// perf/collective_constants.h; docs/COLLECTIVES.md).
//
//   NcclModel nccl(SearchNcclTopology(h100, 8));
//   NcclChoice c = nccl.Choose(NcclCollective::kAllReduce, 1 << 20);  // ring, LL, 21.5 us
#pragma once

#include <array>
#include <string_view>

#include "perf/nccl_topology.h"

namespace fleetsim {

// Broadcast and reduce are ring-only (tuning.cc); vLLM groups one per rank for the uneven
// all-gather and reduce-scatter of expert parallelism (pynccl.py all_gatherv, reduce_scatterv).
enum class NcclCollective { kAllGather, kReduceScatter, kAllReduce, kBroadcast, kReduce };
inline constexpr int kNcclCollectives = 5;  // the values of NcclCollective
enum class NcclAlgorithm { kTree, kRing, kNvls };
enum class NcclProtocol { kLL, kLL128, kSimple };

std::string_view NameOf(NcclCollective collective);
std::string_view NameOf(NcclAlgorithm algorithm);
std::string_view NameOf(NcclProtocol protocol);

struct NcclChoice {
  NcclAlgorithm algorithm = NcclAlgorithm::kRing;
  NcclProtocol protocol = NcclProtocol::kSimple;
  double latency_us = 0;     // the table's latency
  double bandwidth_gbs = 0;  // the algorithm bandwidth the links carry, after corrections
  double us = 0;             // latency + bytes / bandwidth
  // NCCL's own estimate, which made the choice: `us` but for a graph the search fell back
  // on (NcclGraph::fallback), whose 0.1 GB/s only steers the choice.
  double estimate_us = 0;
};

class NcclModel {
 public:
  explicit NcclModel(const NcclTopology& topology);

  // NCCL's choice for `bytes` (nccl-tests' size: the whole buffer; for all-gather the
  // gathered output, for reduce-scatter the input, for broadcast and reduce the root's). NVLS
  // reduces only some types (enqueue.cc: ncclNvlsSupported -- 16- and 32-bit floats and 32/64-bit
  // integers, not int8), all-gathers any: `nvls_type` says whether the reduction's type is one.
  NcclChoice Choose(NcclCollective collective, double bytes, bool nvls_type = true) const;

  // A ring's steps per chunk in NCCL's estimate (tuning.cc nsteps) for `ranks` GPUs: the
  // passes that send, 2 (n - 1) for an all-reduce and n - 1 for an all-gather or
  // reduce-scatter; n for a rooted broadcast or reduce.
  static int RingSteps(NcclCollective collective, int ranks);

  // The table entries (latency us, algorithm bandwidth GB/s; bandwidth 0: not available).
  double LatencyUs(NcclCollective c, NcclAlgorithm a, NcclProtocol p) const;
  double BandwidthGBs(NcclCollective c, NcclAlgorithm a, NcclProtocol p) const;

  // A point-to-point exchange of `bytes` per rank with every other rank (nccl-tests'
  // alltoall: grouped ncclSend/ncclRecv). NCCL has no cost model for it; fleetsim prices
  // it as one ring step: LL while a peer's part fits one channel's P2P_LL_THRESHOLD
  // (16 KiB, enqueue.cc), else Simple, with the (n-1)/n of the buffer that leaves a rank
  // at the ring's Simple bus bandwidth. Returns latency and bandwidth like Choose.
  NcclChoice AllToAll(double bytes) const;

  const NcclTopology& topology() const { return topology_; }

 private:
  static constexpr int kColls = kNcclCollectives, kAlgos = 3, kProtos = 3;
  double& Lat(NcclCollective c, NcclAlgorithm a, NcclProtocol p);
  double& Bw(NcclCollective c, NcclAlgorithm a, NcclProtocol p);

  NcclTopology topology_;
  bool fallback_ = false;  // a graph the search fell back on: carried_ differs from bandwidth_
  std::array<double, kColls * kAlgos * kProtos> latency_{};
  // The algorithm bandwidths at the speeds the graphs carry (NcclGraph::bw_carried): the
  // same as bandwidth_ but for a fallback graph.
  std::array<double, kColls * kAlgos * kProtos> carried_{};
  std::array<double, kColls * kAlgos * kProtos> bandwidth_{};
};

}  // namespace fleetsim
