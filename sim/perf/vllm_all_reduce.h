// Which all-reduce vLLM runs for a tensor-parallel group, as vLLM 0.19.0 decides it
// (vllm/distributed/device_communicators/cuda_communicator.py CudaCommunicator.all_reduce:
// quick reduce (ROCm MI300 only, not modelled), then the custom all-reduce, then PyTorch
// symmetric memory, then pynccl):
//   custom all-reduce (custom_all_reduce.py CustomAllreduce): TP groups only, one node,
//     world size 2, 4, 6 or 8, GPU peer-to-peer access, and more than 2 GPUs only when
//     fully NVLink-connected ("not supported on more than two PCIe-only GPUs"); used below
//     max_size, 8 MiB, lowered with symmetric memory on SM 9.0 / 10.0
//     (all_reduce_utils.py CUSTOM_ALL_REDUCE_MAX_SIZES). Kernels (csrc/custom_all_reduce.cuh
//     CustomAllreduce::allreduce): one-shot (every rank reads every peer's buffer) for 2
//     GPUs, or for <= 4 GPUs below 512 KiB and <= 8 GPUs below 256 KiB; two-shot (reduce-
//     scatter then all-gather through peer memory) otherwise.
//   symmetric memory (symm_mem.py SymmMemCommunicator, VLLM_ALLREDUCE_USE_SYMM_MEM on by
//     default): CUDA, SM 9.0 / 10.0, world size 2-8, bf16 tensors, NVLink multicast;
//     below SYMM_MEM_ALL_REDUCE_MAX_SIZES; multimem (NVLS) all-reduce for world sizes
//     4, 6, 8 (SM 9.0) or 6, 8 (SM 10.0), two-shot otherwise.
//   pynccl: NCCL's all-reduce (perf/nccl_model.h).
//
//   VllmAllReduceRules rules = VllmAllReduceRulesFor(h100, 8, Dtype::kBfloat16);
//   rules.PathFor(128 << 10);  // custom one-shot; 1 MiB: symmetric-memory multimem
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "model/dtype.h"
#include "model/hardware.h"

namespace fleetsim {

enum class VllmAllReducePath {
  kCustomOneShot,
  kCustomTwoShot,
  kSymmMemMultimem,
  kSymmMemTwoShot,
  kNccl,
};
std::string_view NameOf(VllmAllReducePath path);

struct VllmAllReduceRules {
  int world_size = 1;
  bool fully_connected = false;  // every pair on NVLink / xGMI (vLLM's is_fully_connected)
  bool custom_enabled = false;
  std::string custom_disabled_reason;  // the warning vLLM logs, when disabled
  int64_t custom_max_bytes = 0;        // used below this size
  bool symm_mem_enabled = false;
  int64_t symm_mem_max_bytes = 0;
  bool symm_mem_multimem = false;

  VllmAllReducePath PathFor(int64_t bytes) const;
};

VllmAllReduceRules VllmAllReduceRulesFor(const HardwareSpec& hardware, int world_size, Dtype dtype);

}  // namespace fleetsim
