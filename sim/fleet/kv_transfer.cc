#include "fleet/kv_transfer.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "fleet/instance_shard.h"
#include "perf/nccl_topology.h"

namespace fleetsim {

std::string_view KvLinkName(KvLinkKind kind) {
  switch (kind) {
    case KvLinkKind::kNvlink:
      return "nvlink";
    case KvLinkKind::kPcie:
      return "pcie";
    case KvLinkKind::kNetwork:
      return "network";
  }
  return "?";
}

SimTime KvLinkLatency(KvLinkKind kind) {
  // NCCL src/graph/tuning.cc hwLat[NVLINK|PCI|NET][Ring][Simple]: 3.4, 5.7, 9.6 us.
  switch (kind) {
    case KvLinkKind::kNvlink:
      return 3'400;
    case KvLinkKind::kPcie:
      return 5'700;
    case KvLinkKind::kNetwork:
      return 9'600;
  }
  return 9'600;
}

double GpuLinkBytesPerS(const HardwareSpec& hardware, KvLinkKind kind) {
  const IntraNodeSpec& node = hardware.intra_node;
  switch (kind) {
    case KvLinkKind::kNvlink: {
      if (!node.links) return 0;
      const double per_link = node.links->bandwidth_bytes_per_s
                                  ? node.links->bandwidth_bytes_per_s->value
                                  : NcclNvlinkGBs(hardware.compute_capability) * 1e9;
      return per_link * node.links->count;
    }
    case KvLinkKind::kPcie:
      return NcclPcieGBs(node.pcie.generation, node.pcie.lanes) * 1e9;
    case KvLinkKind::kNetwork:
      return hardware.inter_node.bandwidth_bytes_per_s.value;
  }
  return 0;
}

KvLink KvLinkBetween(const FleetSetup& fleet, int32_t prefill, int32_t decode) {
  const FleetInstanceInfo& p = fleet.instances.at(static_cast<std::size_t>(prefill));
  const FleetInstanceInfo& d = fleet.instances.at(static_cast<std::size_t>(decode));
  const HardwareSpec& p_gpu =
      fleet.cluster.pools.at(static_cast<std::size_t>(p.placement.pool)).spec;
  const HardwareSpec& d_gpu =
      fleet.cluster.pools.at(static_cast<std::size_t>(d.placement.pool)).spec;
  const bool same_node =
      p.placement.pool == d.placement.pool && p.placement.node == d.placement.node;
  KvLink link;
  if (!same_node) {
    link.kind = KvLinkKind::kNetwork;
  } else {
    link.kind = p_gpu.intra_node.links ? KvLinkKind::kNvlink : KvLinkKind::kPcie;
  }
  const int pairs = std::min(fleet.groups.at(static_cast<std::size_t>(p.group)).engine.tp,
                             fleet.groups.at(static_cast<std::size_t>(d.group)).engine.tp);
  link.bytes_per_s =
      std::min(GpuLinkBytesPerS(p_gpu, link.kind), GpuLinkBytesPerS(d_gpu, link.kind)) * pairs;
  link.latency = KvLinkLatency(link.kind);
  return link;
}

int64_t KvTransferBytes(const KvCacheLayout& layout, int64_t prompt_tokens) {
  // Whole blocks move (NIXL reads block by block); every rank of the decode instance
  // receives its own heads and its own share of the GDN state. With MTP speculation the
  // MTP layer's KV is in the same blocks (its layer is registered beside the target's), so
  // it moves too.
  const int64_t block = std::max(layout.block_size, 1);
  const int64_t tokens = (prompt_tokens + block - 1) / block * block;
  return layout.tp *
         (tokens * layout.KvBytesPerTokenRankWithDraft() + layout.state_bytes_per_sequence);
}

SimTime KvTransferTime(const KvLink& link, int64_t bytes, int in_flight) {
  if (link.bytes_per_s <= 0) throw std::logic_error("a KV link without bandwidth");
  const double seconds = static_cast<double>(bytes) * std::max(in_flight, 1) / link.bytes_per_s;
  return link.latency + static_cast<SimTime>(std::ceil(seconds * 1e9));
}

SimTime HandOffLookahead(const FleetSetup& fleet) {
  const NetworkDelays delays = DelaysOf(fleet.cluster);
  SimTime fastest = KvLinkLatency(KvLinkKind::kNetwork);
  for (KvLinkKind kind : {KvLinkKind::kNvlink, KvLinkKind::kPcie})
    fastest = std::min(fastest, KvLinkLatency(kind));
  return delays.instance_to_client + delays.gateway_to_instance + fastest;
}

}  // namespace fleetsim
