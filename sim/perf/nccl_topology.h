// What NCCL's topology search finds for a group of GPUs of one node: the ring, tree and
// NVLS graphs (channels and per-channel bandwidth) that its cost model (perf/nccl_model.h)
// turns into latencies and bandwidths. Follows NCCL 2.29.2 (the version of the measured
// H100/H200 tables): src/graph/topo.cc builds the node's links from NVML and sysfs,
// src/graph/paths.cc decides where peer-to-peer is used, src/graph/search.cc
// (ncclTopoCompute) searches the graphs.
//
// NCCL searches an arbitrary topology graph; fleetsim knows three node layouts from the
// catalog (model/hardware.h IntraNodeSpec) and evaluates the same search on them:
//   switch  every GPU's NVLinks go to NVSwitches: a channel at speed s costs s on each
//           GPU's links, an NVLS channel 2 s on its head GPU and s on the others;
//   mesh    a link (or several) to every peer (xGMI): a ring channel uses one peer link;
//   pcie    no GPU links: GPUs on PCIe switches below CPU sockets. Peer-to-peer only
//           within one PCIe switch (paths.cc ncclTopoCheckP2p: p2pLevel PATH_PXB; any
//           path for 2 GPUs on an AMD host) and only where the driver allows it; other
//           pairs go through the CPU's memory (SHM), crossing the inter-socket link.
// A group of N GPUs takes GPUs 0..N-1 of the node (the first-fit placement of
// cluster configs), ring order by index.
//
//   NcclTopology t = SearchNcclTopology(LoadHardware(dir, "H100-SXM"), 8);
//   t.ring.channels;  // 12 channels at t.ring.bw_intra = 30 GB/s
#pragma once

#include <string>

#include "model/hardware.h"

namespace fleetsim {

// How two GPUs of the group exchange data.
enum class NcclTransport {
  kNvlink,      // NVLink or xGMI (NCCL's LINK_NVL; its tables' NVLINK row)
  kPcieP2p,     // PCIe peer-to-peer through a shared switch (the PCI row)
  kPcieP2pCpu,  // PCIe peer-to-peer through the CPU's root complex: paths.cc allows it
                // between 2 GPUs on an AMD host (the PCI row)
  kSharedMem,   // staged through host memory (SHM transport; the PCI row)
};

// One searched graph: channels at a per-channel bandwidth (GB/s, NCCL's unit).
struct NcclGraph {
  int channels = 0;
  double bw_intra = 0;
  double bw_inter = 0;
  // Per channel, what the links carry. The searched speed, except where the search found
  // no graph: NCCL then falls back to the GPUs in rank order with 0.1 GB/s (search.cc,
  // "falling back to simple order"), a figure its cost model chooses with but the copies
  // do not run at; they run at what one channel gets on the ring's narrowest link.
  double bw_carried = 0;
  bool fallback = false;
};

struct NcclTopology {
  int ranks = 1;
  // The compute capability NCCL's tables are indexed by (x10): the catalog's, or 80 for
  // AMD GPUs, whose RCCL fleetsim approximates with NCCL's Ampere rows.
  int compute_capability = 0;
  NcclTransport transport = NcclTransport::kNvlink;
  bool nvlink = false;  // the graphs' intra-node link type is NVLink (else PCI)
  double max_bw = 0;    // search.cc ncclTopoSearchInit: the best GPU-to-GPU path
  double total_bw = 0;  // and the most a GPU's own links carry
  NcclGraph ring;
  NcclGraph tree;
  NcclGraph nvls;  // channels 0 where NVLS is not searched (no NVLink SHARP, SM < 9.0)
};

// `ranks` GPUs (2 or more, at most the node's) of one node of `hardware`.
NcclTopology SearchNcclTopology(const HardwareSpec& hardware, int ranks);

// NCCL's link figures (GB/s per direction). NVLink per link by compute capability
// (topo.h SM60..SM100_NVLINK_BW); PCIe from lanes x GT/s as sysfs reports it
// (topo.cc ncclTopoAddPci: width x speed / 80); between CPU sockets by CPU family
// (topo.cc ncclTopoGetInterCpuBw).
double NcclNvlinkGBs(int compute_capability);
double NcclPcieGBs(int generation, int lanes);
double NcclInterCpuGBs(const HostCpuSpec& cpu);

}  // namespace fleetsim
