// The constants of fleetsim's collective model that no source gives: how far NCCL's own
// cost estimate (perf/nccl_model.h) is from what NCCL achieves, and the fixed cost and
// link share of vLLM's custom all-reduce and PyTorch's symmetric-memory all-reduce, whose
// authors publish no cost model. All are fitted on ONE system's measured tables, the H200
// (../shared/data/profiles/aiconfigurator/h200_sxm: nccl-tests of NCCL 2.29.2 and vLLM
// 0.19.0's custom all-reduce under CUDA graphs), by `fleetsim bundle compare-collectives
// --system h200_sxm --fit`; the H100 and A100 tables are held out (docs/COLLECTIVES.md).
#pragma once

namespace fleetsim {

struct CollectiveConstants {
  // NCCL collectives (all-reduce, all-gather, reduce-scatter):
  //   time = nccl_latency_scale x NCCL's latency + NCCL's bytes / bandwidth term
  //          x a ring's pass factor (below) / nccl_bandwidth_efficiency
  double nccl_latency_scale = 0.88709498529333441;
  double nccl_bandwidth_efficiency = 1;
  // NCCL's ring kernels (src/device/all_reduce.h, all_gather.h, reduce_scatter.h, runRing)
  // take each chunk through a fixed sequence of passes by the same threads: 2n - 1 for an
  // all-reduce, n for an all-gather or reduce-scatter, of which every one but the last
  // sends over the links; the last only copies or reduces what arrived into the output.
  // NCCL's estimate counts the sending passes. This is the time of the last pass as a
  // fraction of a sending one, so a ring's bandwidth term is (passes - 1 + this) /
  // (passes - 1) of NCCL's (0: NCCL's estimate).
  double nccl_ring_local_pass = 0.49815525844997111;
  // The all-to-all (grouped send/receive), priced on NCCL's ring step likewise.
  double p2p_latency_scale = 1.0526852026389557;
  double p2p_bandwidth_efficiency = 0.80913057511596154;
  // vLLM's custom all-reduce: one kernel's fixed cost (launch plus its start and end
  // barriers over peer memory), and the share of NCCL's per-GPU link bandwidth at which
  // its 36 blocks read peer buffers.
  double custom_latency_s = 4.5071611192781155e-06;
  double custom_bandwidth_fraction = 0.77883682651462527;
  // PyTorch symmetric memory (multimem or two-shot): the same two.
  double symm_mem_latency_s = 8.6405486960165063e-06;
  double symm_mem_bandwidth_fraction = 0.63548446105181544;

  // NCCL's estimate as it is; the kernels at their link's full bandwidth, with a bare
  // launch (the starting point of the fit).
  static CollectiveConstants Uncalibrated();
};

}  // namespace fleetsim
