#include "perf/kernel_db/collective_error.h"

#include <cmath>
#include <map>
#include <utility>

#include "core/input_error.h"
#include "perf/collective.h"
#include "perf/kernel_db/coordinate_search.h"

namespace fleetsim {
namespace {

std::string OperationOf(const MeasuredCollective& row) {
  switch (row.source) {
    case CollectiveSource::kNcclTests:
      return "nccl " + row.operation;
    case CollectiveSource::kVllmGraph:
      return "vllm all_reduce (graph)";
    case CollectiveSource::kVllmEager:
      return "vllm all_reduce (eager)";
  }
  return "?";
}

NcclCollective NcclOf(const std::string& operation) {
  if (operation == "all_gather") return NcclCollective::kAllGather;
  if (operation == "reduce_scatter") return NcclCollective::kReduceScatter;
  if (operation == "broadcast") return NcclCollective::kBroadcast;
  if (operation == "reduce") return NcclCollective::kReduce;
  return NcclCollective::kAllReduce;
}

// Whether NVLS reduces an nccl-tests type (enqueue.cc ncclNvlsSupported: 16- and 32-bit
// floats, 32- and 64-bit integers; not 8-bit types, not double).
bool NvlsReduces(const std::string& dtype) {
  return dtype != "int8" && dtype != "uint8" && dtype != "double" && dtype.rfind("f8", 0) != 0;
}

// One model per group size, built with `constants`.
class Models {
 public:
  Models(const HardwareSpec& hardware, const CollectiveConstants& constants)
      : hardware_(hardware), constants_(constants) {}
  const CollectiveModel& For(int gpus) {
    auto it = models_.find(gpus);
    if (it == models_.end()) {
      it = models_.emplace(gpus, CollectiveModel(hardware_, gpus, Dtype::kBfloat16, constants_))
               .first;
    }
    return it->second;
  }

 private:
  const HardwareSpec& hardware_;
  CollectiveConstants constants_;
  std::map<int, CollectiveModel> models_;
};

CollectiveRowError Evaluate(const MeasuredCollective& row, Models& models) {
  CollectiveRowError e;
  e.measured = row;
  e.operation = OperationOf(row);
  const CollectiveModel& model = models.For(row.gpus);
  const auto bytes = static_cast<double>(row.bytes);
  if (row.source == CollectiveSource::kNcclTests) {
    if (row.operation == "alltoall") {
      e.model_us = model.AllToAllUs(bytes);
      e.how = model.AllToAllHow(bytes);
    } else {
      const NcclCollective c = NcclOf(row.operation);
      const bool nvls_type = NvlsReduces(row.dtype);
      e.model_us = model.NcclUs(c, bytes, nvls_type);
      e.how = model.NcclHow(c, bytes, nvls_type);
    }
  } else {
    e.model_us = model.AllReduceUs(row.bytes);
    e.how = model.AllReduceHow(row.bytes);
  }
  return e;
}

// MAPE of the rows of the operations whose names satisfy `keep`, summed per operation.
template <typename Keep>
double SummedMape(const MeasuredCollectives& tables, const HardwareSpec& hardware,
                  const CollectiveConstants& constants, Keep keep) {
  const CollectiveComparison c = CompareCollectives(tables, hardware, constants);
  double sum = 0;
  for (const CollectiveOperationError& op : c.operations)
    if (keep(op.operation)) sum += op.mape;
  return sum;
}

}  // namespace

const CollectiveOperationError* CollectiveComparison::Operation(const std::string& name) const {
  for (const CollectiveOperationError& op : operations)
    if (op.operation == name) return &op;
  return nullptr;
}

CollectiveComparison CompareCollectives(const MeasuredCollectives& tables,
                                        const HardwareSpec& hardware,
                                        const CollectiveConstants& constants) {
  CollectiveComparison c;
  c.system = tables.system;
  c.hardware = hardware.name;
  c.nccl_version = tables.nccl_version;
  c.vllm_version = tables.vllm_version;
  Models models(hardware, constants);
  for (const MeasuredCollective& row : tables.rows) {
    if (row.gpus < 2 || row.gpus > hardware.gpus_per_node.value) continue;
    c.rows.push_back(Evaluate(row, models));
  }
  // Operations in the order they first appear.
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < c.rows.size(); ++i) {
    const CollectiveRowError& r = c.rows[i];
    auto it = index.find(r.operation);
    if (it == index.end()) {
      it = index.emplace(r.operation, c.operations.size()).first;
      CollectiveOperationError op;
      op.operation = r.operation;
      op.target = r.measured.source != CollectiveSource::kVllmEager;
      c.operations.push_back(op);
    }
    CollectiveOperationError& op = c.operations[it->second];
    const double err = r.error();
    ++op.rows;
    op.mape += std::abs(err);
    op.bias += err;
    if (op.worst < 0 ||
        std::abs(err) > std::abs(c.rows[static_cast<std::size_t>(op.worst)].error()))
      op.worst = static_cast<int>(i);
  }
  for (CollectiveOperationError& op : c.operations) {
    op.mape /= op.rows;
    op.bias /= op.rows;
  }
  return c;
}

CollectiveConstants FitCollectiveConstants(const MeasuredCollectives& tables,
                                           const HardwareSpec& hardware) {
  CollectiveConstants c = CollectiveConstants::Uncalibrated();
  {
    CoordinateSearch search;
    search.Add("nccl_latency_scale", &c.nccl_latency_scale, 0.25, 4);
    search.Add("nccl_bandwidth_efficiency", &c.nccl_bandwidth_efficiency, 0.25, 2);
    search.Add("nccl_ring_local_pass", &c.nccl_ring_local_pass, 0.01, 2);
    search.Minimize([&] {
      return SummedMape(tables, hardware, c, [](const std::string& op) {
        return op == "nccl all_gather" || op == "nccl reduce_scatter" || op == "nccl all_reduce";
      });
    });
  }
  {
    CoordinateSearch search;
    search.Add("p2p_latency_scale", &c.p2p_latency_scale, 0.25, 4);
    search.Add("p2p_bandwidth_efficiency", &c.p2p_bandwidth_efficiency, 0.25, 2);
    search.Minimize([&] {
      return SummedMape(tables, hardware, c,
                        [](const std::string& op) { return op == "nccl alltoall"; });
    });
  }
  {
    CoordinateSearch search;
    search.Add("custom_latency_s", &c.custom_latency_s, 0.5e-6, 30e-6);
    search.Add("custom_bandwidth_fraction", &c.custom_bandwidth_fraction, 0.1, 2);
    search.Add("symm_mem_latency_s", &c.symm_mem_latency_s, 0.5e-6, 30e-6);
    search.Add("symm_mem_bandwidth_fraction", &c.symm_mem_bandwidth_fraction, 0.1, 2);
    search.Minimize([&] {
      return SummedMape(tables, hardware, c,
                        [](const std::string& op) { return op == "vllm all_reduce (graph)"; });
    });
  }
  return c;
}

std::string HardwareOfSystem(const std::string& system) {
  if (system == "a100_sxm") return "A100-SXM-80GB";
  if (system == "h100_sxm") return "H100-SXM";
  if (system == "h200_sxm") return "H200-SXM";
  throw OptionError("--system",
                    "unknown system '" + system + "' (known: a100_sxm, h100_sxm, h200_sxm)");
}

}  // namespace fleetsim
