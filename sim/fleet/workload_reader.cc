#include "fleet/workload_reader.h"

#include <utility>

#include "core/hash64.h"
#include "core/input_error.h"

namespace fleetsim {

int32_t GatewayOf(int64_t id, int gateways) {
  return static_cast<int32_t>(SplitMix64(static_cast<uint64_t>(id)) %
                              static_cast<uint64_t>(gateways));
}

int RankOfGateway(int32_t gateway, int ranks) {
  return gateway % ranks;
}

WorkloadReader::WorkloadReader(WorkloadSource* source, int gateways)
    : source_(source), gateways_(gateways), exhausted_(source == nullptr) {}

const RoutedRequest* WorkloadReader::Peek() {
  if (!peeked_ && !exhausted_) {
    std::optional<WorkloadRequest> r = source_->Next();
    if (!r) {
      exhausted_ = true;
      return nullptr;
    }
    RoutedRequest routed;
    routed.id = read_++;
    routed.gateway = GatewayOf(routed.id, gateways_);
    routed.request = std::move(*r);
    peeked_ = std::move(routed);
  }
  return peeked_ ? &*peeked_ : nullptr;
}

RoutedRequest WorkloadReader::Take() {
  RoutedRequest r = std::move(*peeked_);
  peeked_.reset();
  return r;
}

void WorkloadReader::ShipBefore(SimTime stop, std::vector<std::vector<std::byte>>& outgoing) {
  const int ranks = static_cast<int>(outgoing.size());
  while (const RoutedRequest* next = Peek()) {
    if (next->request.arrival >= stop) break;
    const RoutedRequest r = Take();
    AppendRoutedRequest(r, outgoing[static_cast<std::size_t>(RankOfGateway(r.gateway, ranks))]);
  }
}

void WorkloadReader::SkipTo(int64_t taken) {
  while (source_ != nullptr && this->taken() < taken) {
    if (Peek() == nullptr)
      throw InputError(source_->path(), 0, "workload",
                       "ends after " + std::to_string(read_) + " requests, before the " +
                           std::to_string(taken) +
                           " the checkpoint had read (not the workload it was written for)");
    Take();
  }
}

void WorkloadReader::Abandon() {
  exhausted_ = true;
  peeked_.reset();
}

int64_t WorkloadReader::expected() const {
  if (exhausted()) return read_;
  return source_ ? source_->expected_requests().value_or(-1) : -1;
}

}  // namespace fleetsim
