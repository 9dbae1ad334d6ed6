#include "perf/vllm_all_reduce.h"

namespace fleetsim {
namespace {

constexpr int64_t kMiB = 1024 * 1024;

bool SupportedWorldSize(int n) {
  return n == 2 || n == 4 || n == 6 || n == 8;
}

// all_reduce_utils.py CUSTOM_ALL_REDUCE_MAX_SIZES (applies only with symmetric memory on).
int64_t CustomMaxWithSymmMem(int cc, int n) {
  if (cc == 90) return n == 2 ? 64 * kMiB : n == 4 ? 32 * kMiB : n == 6 ? kMiB / 2 : kMiB / 4;
  if (cc == 100) return n <= 4 ? 2 * kMiB : 1 * kMiB;
  return 8 * kMiB;
}

// all_reduce_utils.py SYMM_MEM_ALL_REDUCE_MAX_SIZES; 0 where the capability is absent.
int64_t SymmMemMax(int cc, int n) {
  if (cc == 90) return n == 4 ? 32 * kMiB : 64 * kMiB;
  if (cc == 100) return n == 2 ? 8 * kMiB : n == 4 ? 32 * kMiB : 128 * kMiB;
  return 0;
}

}  // namespace

std::string_view NameOf(VllmAllReducePath path) {
  switch (path) {
    case VllmAllReducePath::kCustomOneShot:
      return "custom one-shot";
    case VllmAllReducePath::kCustomTwoShot:
      return "custom two-shot";
    case VllmAllReducePath::kSymmMemMultimem:
      return "symm-mem multimem";
    case VllmAllReducePath::kSymmMemTwoShot:
      return "symm-mem two-shot";
    case VllmAllReducePath::kNccl:
      return "nccl";
  }
  return "?";
}

VllmAllReduceRules VllmAllReduceRulesFor(const HardwareSpec& hardware, int world_size,
                                         Dtype dtype) {
  VllmAllReduceRules r;
  r.world_size = world_size;
  const IntraNodeSpec& node = hardware.intra_node;
  r.fully_connected = node.topology == "switch" || node.topology == "mesh";
  const int cc = hardware.compute_capability;
  const bool cuda = hardware.vendor == "nvidia";
  // SymmMemCommunicator: CUDA only, a listed capability and world size, and multicast.
  if (world_size > 1 && cuda && SymmMemMax(cc, world_size) > 0 && SupportedWorldSize(world_size) &&
      node.nvls) {
    r.symm_mem_enabled = dtype == Dtype::kBfloat16;  // should_use_symm_mem: bf16 tensors only
    r.symm_mem_max_bytes = SymmMemMax(cc, world_size);
    r.symm_mem_multimem = cc == 90 ? world_size >= 4 : world_size >= 6;
  }
  if (world_size == 1) {
    r.custom_disabled_reason = "a single GPU";
  } else if (!SupportedWorldSize(world_size)) {
    r.custom_disabled_reason =
        "unsupported world size " + std::to_string(world_size) + " (supported: 2, 4, 6, 8)";
  } else if (world_size > 2 && !r.fully_connected) {
    r.custom_disabled_reason = "not supported on more than two PCIe-only GPUs";
  } else if (!node.p2p) {
    r.custom_disabled_reason = "the platform lacks GPU P2P capability";
  } else {
    r.custom_enabled = true;
    // CustomAllreduce's max_size (8 MiB), lowered when the symmetric-memory communicator
    // exists and is not disabled (whatever the dtype: it is created for bf16).
    const bool symm_mem_exists = cuda && SymmMemMax(cc, world_size) > 0 && node.nvls;
    r.custom_max_bytes = symm_mem_exists
                             ? std::min<int64_t>(CustomMaxWithSymmMem(cc, world_size), 8 * kMiB)
                             : 8 * kMiB;
  }
  return r;
}

VllmAllReducePath VllmAllReduceRules::PathFor(int64_t bytes) const {
  // should_custom_ar: a multiple of 16 bytes, and (2 GPUs or fully connected) below max_size.
  if (custom_enabled && bytes % 16 == 0 && bytes < custom_max_bytes) {
    const bool one_shot = world_size == 2 || (world_size <= 4 && bytes < 512 * 1024) ||
                          (world_size <= 8 && bytes < 256 * 1024);
    return one_shot ? VllmAllReducePath::kCustomOneShot : VllmAllReducePath::kCustomTwoShot;
  }
  // should_use_symm_mem: a multiple of 4 bytes below max_size.
  if (symm_mem_enabled && bytes % 4 == 0 && bytes < symm_mem_max_bytes) {
    return symm_mem_multimem ? VllmAllReducePath::kSymmMemMultimem
                             : VllmAllReducePath::kSymmMemTwoShot;
  }
  return VllmAllReducePath::kNccl;
}

}  // namespace fleetsim
