#include "app/collectives_text.h"

#include "core/format.h"

namespace fleetsim {

std::string NodeText(const HardwareSpec& hardware) {
  const IntraNodeSpec& node = hardware.intra_node;
  std::string text = Printf("%d-GPU node, %s", static_cast<int>(hardware.gpus_per_node.value),
                            node.topology.c_str());
  if (node.links) {
    text += Printf(": %d %s%d links per GPU", node.links->count, node.links->kind.c_str(),
                   node.links->generation);
  } else {
    text += Printf(": PCIe Gen%d x%d, %d GPU(s) per PCIe switch, %d socket(s), peer to peer %s",
                   node.pcie.generation, node.pcie.lanes, node.cpu.gpus_per_pcie_switch,
                   node.cpu.sockets, node.p2p ? "allowed" : "refused by the driver");
  }
  return text;
}

std::string_view TransportText(const NcclTopology& topology, const IntraNodeSpec& node) {
  switch (topology.transport) {
    case NcclTransport::kNvlink:
      return node.links && node.links->kind == "xgmi" ? "xGMI" : "NVLink";
    case NcclTransport::kPcieP2p:
      return "PCIe peer to peer through a shared PCIe switch";
    case NcclTransport::kPcieP2pCpu:
      return "PCIe peer to peer through the CPU (NCCL allows it for 2 GPUs on an AMD host)";
    case NcclTransport::kSharedMem:
      return "host memory (SHM) on at least one ring hop";
  }
  return "?";
}

std::optional<std::string> GroupTransportText(const HardwareSpec& hardware, int gpus) {
  if (gpus < 2 || gpus > static_cast<int>(hardware.gpus_per_node.value)) return std::nullopt;
  return std::string(TransportText(SearchNcclTopology(hardware, gpus), hardware.intra_node));
}

}  // namespace fleetsim
