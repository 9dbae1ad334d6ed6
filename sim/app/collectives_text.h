// The words `bundle collectives` and `validate` use for a node and for what NCCL's topology
// search finds on it, so that both say the same thing about the same layout.
//
//   const NcclTopology t = SearchNcclTopology(hardware, 2);
//   TransportText(t, hardware.intra_node);  // "PCIe peer to peer through a shared PCIe switch"
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "model/hardware.h"
#include "perf/nccl_topology.h"

namespace fleetsim {

// The node as the catalog describes it, in the terms NCCL's topology detection reads.
std::string NodeText(const HardwareSpec& hardware);

// How the group's GPUs exchange data, as the topology search found it.
std::string_view TransportText(const NcclTopology& topology, const IntraNodeSpec& node);

// The same for `gpus` GPUs of one node of `hardware`, as the simulator prices their
// collectives; nothing for one GPU, or for more than a node holds.
std::optional<std::string> GroupTransportText(const HardwareSpec& hardware, int gpus);

}  // namespace fleetsim
