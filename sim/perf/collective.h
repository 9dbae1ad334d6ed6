// The collectives an engine step runs, priced as NCCL and vLLM run them on one node of a
// catalog GPU (docs/COLLECTIVES.md):
//   - the tensor-parallel all-reduce (after o_proj, gdn_out_proj, down_proj or the MoE
//     block, and the vocab-parallel embedding): vLLM's choice of communicator
//     (perf/vllm_all_reduce.h) -- its custom all-reduce, PyTorch symmetric memory, or
//     NCCL -- each with its cost;
//   - NCCL's all-gather (the vocab-parallel lm_head's logits) and reduce-scatter;
//   - expert parallelism's exchange, as vLLM 0.19 runs it by default (all2all_backend
//     "allgather_reducescatter", device_communicators/all2all.py AgRsAll2AllManager):
//     dispatch all-gathers each token's hidden state with its router logits (one per
//     expert), combine reduce-scatters the hidden states -- with ranks of unequal token
//     counts, a group of broadcasts and one of reduces, one rooted at each rank (vLLM's
//     all_gatherv and reduce_scatterv); and a true all-to-all
//     (grouped send/receive) for the backends that exchange only routed tokens.
// Costs are NCCL's own model (perf/nccl_model.h) and kernel models for vLLM's and
// PyTorch's all-reduces, with the constants of perf/collective_constants.h.
//
//   CollectiveModel tp8(h100, 8, Dtype::kBfloat16);
//   tp8.AllReduceUs(2048 * 8192 * 2);  // one all-reduce of 2,048 tokens x hidden 8192
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "model/dtype.h"
#include "model/hardware.h"
#include "perf/collective_constants.h"
#include "perf/nccl_model.h"
#include "perf/vllm_all_reduce.h"

namespace fleetsim {

class CollectiveModel {
 public:
  // One rank: every collective is free.
  CollectiveModel() = default;
  // A group of `ranks` GPUs (the first ones) of one node of `hardware`, exchanging tensors
  // of `dtype`.
  CollectiveModel(const HardwareSpec& hardware, int ranks, Dtype dtype,
                  CollectiveConstants constants = {});

  int ranks() const { return ranks_; }

  // vLLM's tensor-parallel all-reduce of `bytes`, and the communicator it takes.
  double AllReduceUs(int64_t bytes) const;
  VllmAllReducePath AllReducePath(int64_t bytes) const;
  // The same choice in words: "custom one-shot", "nccl ring LL", ...
  std::string AllReduceHow(int64_t bytes) const;
  // NCCL alone (pynccl, or nccl-tests): `bytes` as nccl-tests counts them (the whole
  // buffer: the gathered output of an all-gather, the input of a reduce-scatter, what one
  // rank sends in all of an all-to-all).
  // `nvls_type`: as NcclModel::Choose (false for int8 reductions).
  double NcclUs(NcclCollective collective, double bytes, bool nvls_type = true) const;
  NcclChoice NcclChoiceFor(NcclCollective collective, double bytes, bool nvls_type = true) const;
  // Its algorithm and protocol in words: "ring LL128", "nvls Simple".
  std::string NcclHow(NcclCollective collective, double bytes, bool nvls_type = true) const;
  double AllToAllUs(double bytes) const;
  // Its protocol in words: "p2p LL", "p2p Simple".
  std::string AllToAllHow(double bytes) const;
  // vLLM's custom all-reduce and symmetric-memory kernels, where vLLM would run them.
  double CustomAllReduceUs(double bytes, bool one_shot) const;
  double SymmMemAllReduceUs(double bytes, bool multimem) const;

  // Expert parallelism over this group with vLLM's default backend (allgather_reducescatter):
  // `tokens` tokens in all its ranks, which the dispatch gathers everywhere with their
  // router logits over `num_experts`, `hidden` wide.
  double ExpertDispatchCombineUs(int64_t tokens, int64_t hidden, int num_experts) const;
  // The same with each rank's own token count, one per rank of the group. Equal counts
  // are the all-gather and reduce-scatter above; unequal ones take vLLM's all_gatherv and
  // reduce_scatterv (device_communicators/cuda_communicator.py, pynccl.py): one NCCL group
  // of a broadcast per rank of its tokens, and one of a reduce per rank of its tokens'
  // outputs to it. A group is one launch whose operations share the channels: it pays
  // the longest operation's latency once and every operation's bytes at its bandwidth, so
  // the busiest rank's share crosses the links alone instead of 1/n of the whole.
  double ExpertDispatchCombineUs(std::span<const int64_t> rank_tokens, int64_t hidden,
                                 int num_experts) const;
  // What that dispatch and combine move, at `act_bytes` per element.
  static int64_t ExpertDispatchBytes(int64_t tokens, int64_t hidden, int num_experts,
                                     int64_t act_bytes) {
    return tokens * (hidden + num_experts) * act_bytes;
  }
  static int64_t ExpertCombineBytes(int64_t tokens, int64_t hidden, int64_t act_bytes) {
    return tokens * hidden * act_bytes;
  }
  // The same exchange as an all-to-all of only the routed copies (each token to top_k
  // experts, spread evenly over the ranks), for all-to-all backends.
  double ExpertAllToAllUs(int64_t tokens, int64_t hidden, int top_k) const;

  const VllmAllReduceRules& rules() const { return rules_; }
  // Null for one rank.
  const NcclModel* nccl() const { return nccl_.get(); }

 private:
  // A group of one `collective` per rank, rooted there, of bytes_of(that rank's tokens).
  template <typename BytesOf>
  double RootedGroupUs(NcclCollective collective, std::span<const int64_t> rank_tokens,
                       BytesOf bytes_of) const;
  double Calibrated(const NcclChoice& c, double bytes, double latency_scale,
                    double efficiency) const;

  int ranks_ = 1;
  int act_bytes_ = 2;
  double memory_bandwidth_ = 1;  // bytes/s, for symmetric memory's copies in and out
  double link_gbs_ = 0;          // NCCL's bandwidth of one GPU's links to the group
  CollectiveConstants c_;
  VllmAllReduceRules rules_;
  std::shared_ptr<const NcclModel> nccl_;
  // Per NcclCollective, a ring's bandwidth-term factor for its local pass (set once: the
  // ranks are fixed; NcclUs runs on every exchange of every DP lock-step). 1 where a ring
  // has no such pass to count (the rooted broadcast and reduce).
  std::array<double, kNcclCollectives> ring_pass_factor_{};
};

}  // namespace fleetsim
