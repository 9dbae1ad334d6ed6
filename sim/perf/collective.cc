#include "perf/collective.h"

#include <algorithm>
#include <string>

#include "perf/nccl_topology.h"

namespace fleetsim {

CollectiveConstants CollectiveConstants::Uncalibrated() {
  CollectiveConstants c;
  c.nccl_latency_scale = 1;
  c.nccl_bandwidth_efficiency = 1;
  c.nccl_ring_local_pass = 0;
  c.p2p_latency_scale = 1;
  c.p2p_bandwidth_efficiency = 1;
  c.custom_latency_s = 2e-6;
  c.custom_bandwidth_fraction = 1;
  c.symm_mem_latency_s = 2e-6;
  c.symm_mem_bandwidth_fraction = 1;
  return c;
}

CollectiveModel::CollectiveModel(const HardwareSpec& hardware, int ranks, Dtype dtype,
                                 CollectiveConstants constants)
    : ranks_(ranks),
      act_bytes_(BytesOf(dtype)),
      memory_bandwidth_(
          hardware.memory_bandwidth_bytes_per_s.value *
          (hardware.memory_stream_efficiency ? hardware.memory_stream_efficiency->value : 1.0)),
      c_(constants),
      rules_(VllmAllReduceRulesFor(hardware, ranks, dtype)) {
  ring_pass_factor_.fill(1.0);
  if (ranks <= 1) return;
  const NcclTopology topology = SearchNcclTopology(hardware, ranks);
  link_gbs_ = topology.total_bw;
  nccl_ = std::make_shared<const NcclModel>(topology);
  // A ring's passes per chunk that send (NCCL's estimate counts these, its steps) and the
  // one that does not. The rooted rings keep 1: their last rank's copy overlaps the root's
  // next send.
  for (const NcclCollective collective :
       {NcclCollective::kAllReduce, NcclCollective::kAllGather, NcclCollective::kReduceScatter}) {
    const double sending = NcclModel::RingSteps(collective, ranks);
    ring_pass_factor_[static_cast<std::size_t>(collective)] =
        (sending + c_.nccl_ring_local_pass) / sending;
  }
}

double CollectiveModel::Calibrated(const NcclChoice& c, double bytes, double latency_scale,
                                   double efficiency) const {
  return latency_scale * c.latency_us + bytes / (1000 * c.bandwidth_gbs) / efficiency;
}

double CollectiveModel::NcclUs(NcclCollective collective, double bytes, bool nvls_type) const {
  if (!nccl_) return 0;
  const NcclChoice c = nccl_->Choose(collective, bytes, nvls_type);
  const double ring = c.algorithm == NcclAlgorithm::kRing
                          ? ring_pass_factor_[static_cast<std::size_t>(collective)]
                          : 1.0;
  return Calibrated(c, bytes, c_.nccl_latency_scale, c_.nccl_bandwidth_efficiency / ring);
}

NcclChoice CollectiveModel::NcclChoiceFor(NcclCollective collective, double bytes,
                                          bool nvls_type) const {
  return nccl_ ? nccl_->Choose(collective, bytes, nvls_type) : NcclChoice{};
}

std::string CollectiveModel::AllToAllHow(double bytes) const {
  return nccl_ ? "p2p " + std::string(NameOf(nccl_->AllToAll(bytes).protocol)) : "";
}

std::string CollectiveModel::NcclHow(NcclCollective collective, double bytes,
                                     bool nvls_type) const {
  const NcclChoice c = NcclChoiceFor(collective, bytes, nvls_type);
  return std::string(NameOf(c.algorithm)) + " " + std::string(NameOf(c.protocol));
}

double CollectiveModel::AllToAllUs(double bytes) const {
  if (!nccl_) return 0;
  return Calibrated(nccl_->AllToAll(bytes), bytes, c_.p2p_latency_scale,
                    c_.p2p_bandwidth_efficiency);
}

// One-shot: every rank reads its n - 1 peers' whole buffers through its links. Two-shot:
// it reads (n - 1) / n of the buffer to reduce its part, and as much again to gather the
// others' parts, with a barrier in between (a second fixed cost).
double CollectiveModel::CustomAllReduceUs(double bytes, bool one_shot) const {
  if (ranks_ <= 1) return 0;
  const double n = ranks_;
  const double rate = c_.custom_bandwidth_fraction * link_gbs_ * 1e3;  // bytes per us
  const double fixed = c_.custom_latency_s * 1e6;
  if (one_shot) return fixed + (n - 1) * bytes / rate;
  return 2 * fixed + 2 * (n - 1) / n * bytes / rate;
}

// vLLM copies the input into the symmetric buffer and the result out (symm_mem.py), two
// passes over local memory. Multimem: one pass in which the switch reduces each rank's
// share and multicasts it (about the whole buffer through each GPU's links); two-shot as
// the custom kernel's.
double CollectiveModel::SymmMemAllReduceUs(double bytes, bool multimem) const {
  if (ranks_ <= 1) return 0;
  const double n = ranks_;
  const double rate = c_.symm_mem_bandwidth_fraction * link_gbs_ * 1e3;
  const double fixed = c_.symm_mem_latency_s * 1e6;
  const double copies = 2 * bytes / memory_bandwidth_ * 1e6;
  if (multimem) return fixed + bytes / rate + copies;
  return 2 * fixed + 2 * (n - 1) / n * bytes / rate + copies;
}

VllmAllReducePath CollectiveModel::AllReducePath(int64_t bytes) const {
  return rules_.PathFor(bytes);
}

std::string CollectiveModel::AllReduceHow(int64_t bytes) const {
  const VllmAllReducePath path = AllReducePath(bytes);
  std::string how(NameOf(path));
  if (path == VllmAllReducePath::kNccl)
    how += " " + NcclHow(NcclCollective::kAllReduce, static_cast<double>(bytes));
  return how;
}

double CollectiveModel::AllReduceUs(int64_t bytes) const {
  if (ranks_ <= 1) return 0;
  const auto b = static_cast<double>(bytes);
  switch (rules_.PathFor(bytes)) {
    case VllmAllReducePath::kCustomOneShot:
      return CustomAllReduceUs(b, true);
    case VllmAllReducePath::kCustomTwoShot:
      return CustomAllReduceUs(b, false);
    case VllmAllReducePath::kSymmMemMultimem:
      return SymmMemAllReduceUs(b, true);
    case VllmAllReducePath::kSymmMemTwoShot:
      return SymmMemAllReduceUs(b, false);
    case VllmAllReducePath::kNccl:
      break;
  }
  return NcclUs(NcclCollective::kAllReduce, b);
}

// vLLM 0.19's AgRsAll2AllManager (distributed/device_communicators/all2all.py): the dispatch
// all-gathers the hidden states and the router logits (dispatch_router_logits; the bf16
// gate's output, one per expert) in one NCCL group, priced as one all-gather of their
// bytes; top-k runs after it on every rank. The combine reduce-scatters the hidden states.
// Ranks of unequal sizes (no CUDA-graph padding) go through all_gatherv's grouped
// broadcasts, which move the same bytes: priced the same way.
double CollectiveModel::ExpertDispatchCombineUs(int64_t tokens, int64_t hidden,
                                                int num_experts) const {
  if (ranks_ <= 1 || tokens <= 0) return 0;
  const auto bytes = static_cast<int64_t>(act_bytes_);
  return NcclUs(NcclCollective::kAllGather,
                static_cast<double>(ExpertDispatchBytes(tokens, hidden, num_experts, bytes))) +
         NcclUs(NcclCollective::kReduceScatter,
                static_cast<double>(ExpertCombineBytes(tokens, hidden, bytes)));
}

double CollectiveModel::ExpertDispatchCombineUs(std::span<const int64_t> rank_tokens,
                                                int64_t hidden, int num_experts) const {
  if (ranks_ <= 1 || rank_tokens.empty()) return 0;
  int64_t tokens = 0;
  bool equal = true;
  for (const int64_t t : rank_tokens) {
    tokens += t;
    equal = equal && t == rank_tokens.front();
  }
  // cuda_communicator.py: all_gatherv drops equal sizes for a plain all-gather, and
  // reduce_scatterv keeps reduce_scatter for them.
  if (equal) return ExpertDispatchCombineUs(tokens, hidden, num_experts);
  const auto bytes = static_cast<int64_t>(act_bytes_);
  return RootedGroupUs(
             NcclCollective::kBroadcast, rank_tokens,
             [&](int64_t t) { return ExpertDispatchBytes(t, hidden, num_experts, bytes); }) +
         RootedGroupUs(NcclCollective::kReduce, rank_tokens,
                       [&](int64_t t) { return ExpertCombineBytes(t, hidden, bytes); });
}

template <typename BytesOf>
double CollectiveModel::RootedGroupUs(NcclCollective collective,
                                      std::span<const int64_t> rank_tokens,
                                      BytesOf bytes_of) const {
  double latency = 0;
  double transfer = 0;
  for (const int64_t t : rank_tokens) {
    if (t <= 0) continue;
    const auto b = static_cast<double>(bytes_of(t));
    const NcclChoice c = nccl_->Choose(collective, b);
    latency = std::max(latency, c.latency_us);
    transfer += b / (1000 * c.bandwidth_gbs);
  }
  return c_.nccl_latency_scale * latency + transfer / c_.nccl_bandwidth_efficiency;
}

// Each rank sends its tokens' top_k copies, spread evenly over the ranks, and receives the
// results back: two all-to-alls of tokens / ranks x top_k hidden states per rank.
double CollectiveModel::ExpertAllToAllUs(int64_t tokens, int64_t hidden, int top_k) const {
  if (ranks_ <= 1 || tokens <= 0) return 0;
  const double per_rank =
      static_cast<double>(tokens) / ranks_ * top_k * static_cast<double>(hidden) * act_bytes_;
  return 2 * AllToAllUs(per_rank);
}

}  // namespace fleetsim
