// Measured collectives from NVIDIA's aiconfigurator database, read in place from
// ../shared/data/profiles/aiconfigurator/<system>:
//   nccl_<version>/nccl_perf.csv: nccl-tests (all_gather, reduce_scatter, all_reduce,
//     alltoall) in fp16 ("half") and int8 on 2, 4 and 8 GPUs of one node; the collector
//     (aiconfigurator collector/network/collect_nccl.py) runs `<op>_perf -b S -e S -t N`
//     and records message_size = S / bytes per element, so a row's bytes are the
//     nccl-tests size: the whole buffer.
//   vllm_<version>/comm/custom_allreduce_perf.csv: vLLM's tensor_model_parallel_all_reduce
//     of bf16 tensors (message_size elements), captured in a CUDA graph ("vllm_graph") or
//     called eagerly on a fresh clone ("vllm_eager"; collector/network/collect_all_reduce.py).
// Latencies are milliseconds there; microseconds here.
//
//   MeasuredCollectives h100 = LoadMeasuredCollectives(shared / "profiles/aiconfigurator",
//                                                      "h100_sxm");
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace fleetsim {

enum class CollectiveSource { kNcclTests, kVllmGraph, kVllmEager };

struct MeasuredCollective {
  CollectiveSource source = CollectiveSource::kNcclTests;
  std::string operation;  // all_gather, reduce_scatter, all_reduce, alltoall
  std::string dtype;      // half, int8, bfloat16
  int gpus = 0;
  int64_t bytes = 0;
  double measured_us = 0;
};

struct MeasuredCollectives {
  std::string system;
  std::string nccl_version;  // from the folder name, e.g. 2.29.2
  std::string vllm_version;
  std::filesystem::path nccl_file;
  std::filesystem::path vllm_file;
  std::vector<MeasuredCollective> rows;
};

// `system`: a100_sxm, h100_sxm or h200_sxm; anything else (or a missing table) is an
// InputError naming it.
MeasuredCollectives LoadMeasuredCollectives(const std::filesystem::path& dir,
                                            const std::string& system);

}  // namespace fleetsim
