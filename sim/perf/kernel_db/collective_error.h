// fleetsim's collective model (perf/collective.h) against one system's measured tables
// (measured_collectives.h), row by row and per operation, and the fit of its constants
// (perf/collective_constants.h) on one system. `fleetsim bundle compare-collectives`.
//
// Operations: NCCL's all_gather, reduce_scatter, all_reduce and alltoall (nccl-tests,
// fp16 and int8), and vLLM's all-reduce under CUDA graphs (its communicator choice:
// custom, symmetric memory or NCCL). vLLM's eager calls are compared too but are not a
// target: they time a Python call on a fresh clone of the input (about 21 us on H100/H200
// and 44 us on A100 up to 2 MiB, whatever the size), which no GPU model prices.
//
//   CollectiveComparison c = CompareCollectives(tables, h100, CollectiveConstants{});
//   for (const CollectiveOperationError& op : c.operations) print(op.operation, op.mape);
#pragma once

#include <string>
#include <vector>

#include "model/hardware.h"
#include "perf/collective_constants.h"
#include "perf/kernel_db/measured_collectives.h"

namespace fleetsim {

struct CollectiveRowError {
  MeasuredCollective measured;
  std::string operation;  // as in CollectiveOperationError
  double model_us = 0;
  std::string how;  // the algorithm and protocol, or vLLM's path
  double error() const { return (model_us - measured.measured_us) / measured.measured_us; }
};

struct CollectiveOperationError {
  std::string operation;  // "nccl all_reduce", ..., "vllm all_reduce (graph)"
  bool target = true;     // held to the MAPE target (not the eager calls)
  int rows = 0;
  double mape = 0;
  double bias = 0;
  int worst = -1;  // index into CollectiveComparison::rows
};

struct CollectiveComparison {
  std::string system;
  std::string hardware;
  std::string nccl_version;
  std::string vllm_version;
  std::vector<CollectiveRowError> rows;
  std::vector<CollectiveOperationError> operations;
  const CollectiveOperationError* Operation(const std::string& name) const;
};

CollectiveComparison CompareCollectives(const MeasuredCollectives& tables,
                                        const HardwareSpec& hardware,
                                        const CollectiveConstants& constants);

// Fits every constant on `tables` from CollectiveConstants::Uncalibrated(), one family at a
// time by a deterministic coordinate search: NCCL's two on the sum of the all-gather,
// reduce-scatter and all-reduce MAPEs, then the all-to-all's two on its MAPE, then the
// custom and symmetric-memory kernels' four on the vLLM graph rows' MAPE.
CollectiveConstants FitCollectiveConstants(const MeasuredCollectives& tables,
                                           const HardwareSpec& hardware);

// The catalog GPU of a system's tables: a100_sxm -> A100-SXM-80GB, h100_sxm -> H100-SXM,
// h200_sxm -> H200-SXM.
std::string HardwareOfSystem(const std::string& system);

}  // namespace fleetsim
