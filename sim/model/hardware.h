// One GPU of the hardware catalog (cluster_configs/hardware/<name>.yaml). Every figure in
// the file carries its source; the loader refuses a figure without one.
//
//   HardwareSpec h200 = LoadHardware(ProjectRoot() / "cluster_configs/hardware", "H200-SXM");
//   h200.UsableMemoryBytes();  // what vLLM multiplies by gpu_memory_utilization
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/attention_backend.h"
#include "model/dtype.h"

namespace fleetsim {

// A catalog number and where it comes from (datasheet, whitepaper, measurement).
struct SourcedValue {
  double value = 0;
  std::string source;
};

// One node's GPU interconnect as NCCL's topology detection finds it (src/graph/topo.cc:
// NVLinks from NVML, the PCIe link from sysfs, CPUs from /proc/cpuinfo) and as vLLM checks
// it (peer-to-peer access, full NVLink connectivity). perf/nccl_topology.h turns it into
// the channels and bandwidths NCCL's search finds.

// A GPU's own links to other GPUs: NVLink (to an NVSwitch, or to each peer) or AMD xGMI.
struct GpuLinksSpec {
  std::string kind;  // nvlink, xgmi
  int generation = 0;
  int count = 0;  // links per GPU
  // Per link per direction. NCCL takes NVLink's from its own table by compute capability
  // (topo.h SMxx_NVLINK_BW), so the catalog gives it for xGMI only.
  std::optional<SourcedValue> bandwidth_bytes_per_s;
  std::string source;
};

struct PcieLinkSpec {
  int generation = 0;  // 3, 4, 5, 6
  int lanes = 0;
  std::string source;
};

// The host: how many CPU sockets (NUMA domains) the GPUs are spread over, how many GPUs
// share one PCIe switch below a socket, and the CPU family that sets NCCL's inter-socket
// bandwidth (topo.h: AMD_BW, SKL_QPI_BW, SRP_QPI_BW, ERP_QPI_BW, else BDW_QPI_BW).
struct HostCpuSpec {
  std::string vendor;  // intel, amd
  std::string model;   // intel: broadwell, skylake, sapphire-rapids, emerald-rapids; amd: any
  int sockets = 1;
  int gpus_per_pcie_switch = 1;  // 1: every GPU on its own root port
  std::string source;
};

struct IntraNodeSpec {
  std::string kind;      // nvlink3, nvlink4, nvlink5, xgmi, pcie4, pcie5 (a label)
  std::string topology;  // switch (NVSwitch), mesh (a link to every peer), pcie (no GPU links)
  std::optional<GpuLinksSpec> links;  // absent on PCIe-only cards
  // NVLink SHARP multicast (NVSwitch 3 and later): NCCL's NVLS algorithm, and the
  // multicast all-reduce of PyTorch symmetric memory that vLLM uses on SM 9.0 / 10.0.
  bool nvls = false;
  std::string nvls_source;
  PcieLinkSpec pcie;
  // Whether the driver gives GPUs of a node access to each other's memory. GeForce cards
  // do not: NCCL then goes through host shared memory (SHM) and vLLM's custom all-reduce
  // stays off.
  bool p2p = false;
  std::string p2p_source;
  HostCpuSpec cpu;
};

struct InterNodeSpec {
  std::string kind;                    // infiniband-ndr, ethernet-400g, ...
  SourcedValue bandwidth_bytes_per_s;  // per GPU per direction (its share of the NICs)
};

struct HardwareSpec {
  std::string name;
  std::string vendor;
  std::string product;
  std::string file;
  SourcedValue memory_bytes;
  std::optional<SourcedValue> memory_visible_bytes;
  SourcedValue memory_bandwidth_bytes_per_s;
  // The fraction of memory_bandwidth_bytes_per_s a streaming kernel reaches on this card,
  // where a measurement says it differs from what the analytic fit found on H100/H200 HBM
  // (NVIDIA GDDR cards stream at nearly their nominal rate; in the catalog, the RTX 4090
  // and RTX PRO 6000). Absent: the fitted value applies.
  std::optional<SourcedValue> memory_stream_efficiency;
  // The dense 16-bit (BF16) matmul rate, FLOP/s, that a published shape search measured on
  // this card (Maximum Achievable Matmul FLOPS, "MAMF"), where one exists for a card the
  // analytic fit did not see. It replaces the fitted fraction of peak of every GEMM (MoE's
  // included; the fraction is a large GEMM's, falling at small m) and scales the other
  // tensor-core kernels' fractions alike: cards differ in how far their
  // sustained clocks sit from the spec sheet's (the RTX 4090 beats its rated peak; the
  // A100 reaches 87 % of it, Hopper 80 %). Absent: the fit applies.
  std::optional<SourcedValue> matmul_achievable_flops;
  std::map<std::string, SourcedValue> peak_flops;  // by dtype name, dense
  SourcedValue compute_units;
  std::string compute_unit_kind;  // SM or CU
  SourcedValue l2_cache_bytes;
  SourcedValue gpus_per_node;
  IntraNodeSpec intra_node;
  InterNodeSpec inter_node;
  // CUDA compute capability x 10 (90 for 9.0); NCCL's tables and vLLM's communicator rules
  // are keyed by it. 0 for AMD GPUs, whose RCCL fleetsim models with NCCL's Ampere rows.
  int compute_capability = 0;
  std::string compute_capability_source;
  // The attention backends vLLM offers on this GPU, their rules and kernels
  // (model/attention_backend.h); which one an instance runs depends on its model and engine.
  AttentionCatalog attention;
  SourcedValue price_per_gpu_hour_usd;  // on-demand list price; users edit it for their own

  // The device total the driver reports when the catalog has it, else the datasheet size.
  int64_t UsableMemoryBytes() const;
  // The dense 16-bit tensor peak for `dtype`: fp16's for fp16 weights, else bf16's, else
  // the other 16-bit figure (the catalog requires one of the two).
  double Peak16BitFlops(Dtype dtype) const;
};

HardwareSpec LoadHardwareFile(const std::string& path);

// Names of the catalog's YAML files (without extension), sorted.
std::vector<std::string> HardwareNames(const std::filesystem::path& catalog_dir);

// A catalog name or a path to a YAML file; an unknown name lists the known ones.
HardwareSpec LoadHardware(const std::filesystem::path& catalog_dir,
                          const std::string& name_or_path);

}  // namespace fleetsim
