// Prefill/decode disaggregation: what moving one request's KV from a prefill instance to a
// decode instance costs (docs/DISAGGREGATION.md, "The transfer").
//
//   bytes = decode TP x (whole attention blocks of the prompt x bytes per token, all
//           attention layers, one rank + one sequence's GDN state, all GDN layers, one rank)
//   time  = link latency + bytes / (per-GPU link bandwidth x min(prefill TP, decode TP)
//                                   / transfers in flight on that link)
//
// The link is NVLink (or xGMI) when both instances sit on one node with GPU links, PCIe
// when that node has none, and the GPUs' NICs otherwise. Bandwidths come from the hardware
// catalog and NCCL's link table (perf/nccl_topology.h), latencies from NCCL's per-hop
// hardware latencies (src/graph/tuning.cc hwLat, Ring/Simple).
//
//   KvLink link = KvLinkBetween(fleet, prefill_instance, decode_instance);
//   int64_t bytes = KvTransferBytes(fleet.groups[decode_group].layout, prompt_tokens);
//   SimTime took = KvTransferTime(link, bytes, /*in_flight=*/1);
#pragma once

#include <cstdint>
#include <string_view>

#include "core/sim_time.h"
#include "engine/kv_cache_layout.h"
#include "fleet/fleet_setup.h"
#include "model/hardware.h"

namespace fleetsim {

enum class KvLinkKind { kNvlink, kPcie, kNetwork };
std::string_view KvLinkName(KvLinkKind kind);

struct KvLink {
  KvLinkKind kind = KvLinkKind::kNetwork;
  double bytes_per_s = 0;  // all GPU pairs of the two instances together, one direction
  SimTime latency = 0;
};

// NCCL's per-hop hardware latency of a link (tuning.cc hwLat, Ring/Simple), ns.
SimTime KvLinkLatency(KvLinkKind kind);
// One GPU's bandwidth over a link kind, one direction: NVLink as NCCL counts it (links x
// its per-link figure by compute capability; xGMI from the catalog), PCIe as NCCL reads it
// from sysfs, the network as the catalog's per-GPU share of the NICs.
double GpuLinkBytesPerS(const HardwareSpec& hardware, KvLinkKind kind);
// The link between two instances' GPUs (the smaller figure of the two ends' GPUs, times the
// GPU pairs: min of the two TP degrees).
KvLink KvLinkBetween(const FleetSetup& fleet, int32_t prefill, int32_t decode);
// The bytes the decode instance receives for a prompt: its own layout's.
int64_t KvTransferBytes(const KvCacheLayout& decode_layout, int64_t prompt_tokens);
// How long the transfer takes with `in_flight` transfers (itself included) sharing the link.
SimTime KvTransferTime(const KvLink& link, int64_t bytes, int in_flight);
// The least time a handed-off request takes from its first token at the prefill instance
// to reaching the decode instance: the prefill answer to its gateway, the gateway's
// request to the decode instance, and the fastest link's latency (the fleet's lookahead
// for instance -> instance messages).
SimTime HandOffLookahead(const FleetSetup& fleet);

}  // namespace fleetsim
