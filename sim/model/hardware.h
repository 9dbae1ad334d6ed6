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

struct LinkSpec {
  std::string kind;                    // nvlink4, pcie5, xgmi, infiniband-ndr, ...
  std::string topology;                // switch, mesh, pcie (intra-node only)
  SourcedValue bandwidth_bytes_per_s;  // per GPU, per direction
  SourcedValue latency_s;
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
  LinkSpec intra_node;
  LinkSpec inter_node;
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
