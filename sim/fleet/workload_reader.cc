#include "fleet/workload_reader.h"

#include <limits>
#include <stdexcept>
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

WorkloadReader::WorkloadReader(WorkloadSource* source, int gateways, int rank, int ranks)
    : source_(source), gateways_(gateways), rank_(rank), ranks_(ranks), exhausted_(false) {
  if (source == nullptr || !source->can_pass_over() || ranks < 1 || rank < 0 || rank >= ranks)
    throw std::logic_error(
        "every rank reads the workload only from a source of its own that "
        "can pass over a request");
}

bool WorkloadReader::Advance() {
  const int64_t id = read_;
  const int32_t gateway = GatewayOf(id, gateways_);
  if (every_rank_reads() && RankOfGateway(gateway, ranks_) != rank_) {
    passed_ = source_->PassOver();
    if (!passed_) return false;
    ++read_;
    return true;
  }
  std::optional<WorkloadRequest> r = source_->Next();
  if (!r) return false;
  RoutedRequest routed;
  routed.id = id;
  routed.gateway = gateway;
  routed.request = std::move(*r);
  peeked_ = std::move(routed);
  ++read_;
  ++made_;
  return true;
}

void WorkloadReader::LookAhead() {
  if (!peeked_ && !passed_ && !exhausted_ && !Advance()) exhausted_ = true;
}

std::optional<SimTime> WorkloadReader::NextArrival() {
  LookAhead();
  if (peeked_) return peeked_->request.arrival;
  return passed_;
}

const RoutedRequest* WorkloadReader::Peek() {
  while (!peeked_ && !exhausted_) {
    passed_.reset();  // another rank's: it hands that one on
    LookAhead();
  }
  return peeked_ ? &*peeked_ : nullptr;
}

RoutedRequest WorkloadReader::Take() {
  RoutedRequest r = std::move(*peeked_);
  peeked_.reset();
  return r;
}

void WorkloadReader::ShipBefore(SimTime stop, std::vector<std::vector<std::byte>>& outgoing,
                                std::deque<RoutedRequest>& own) {
  const int ranks = static_cast<int>(outgoing.size());
  while (const RoutedRequest* next = Peek()) {
    if (next->request.arrival >= stop) break;
    RoutedRequest r = Take();
    const int rank = RankOfGateway(r.gateway, ranks);
    if (rank == 0)
      own.push_back(std::move(r));
    else
      AppendRoutedRequest(r, outgoing[static_cast<std::size_t>(rank)]);
  }
}

void WorkloadReader::TakeBefore(SimTime stop, std::deque<RoutedRequest>& inbox) {
  for (std::optional<SimTime> next = NextArrival(); next && *next < stop; next = NextArrival()) {
    if (peeked_)
      inbox.push_back(Take());
    else
      passed_.reset();
  }
}

int64_t WorkloadReader::taken() const {
  if (source_ == nullptr) return std::numeric_limits<int64_t>::max();
  return read_ - (peeked_ || passed_ ? 1 : 0);
}

void WorkloadReader::SkipTo(int64_t taken) {
  while (source_ != nullptr && this->taken() < taken) {
    const bool more = every_rank_reads() ? source_->PassOver().has_value() : Peek() != nullptr;
    if (!more)
      throw InputError(source_->path(), 0, "workload",
                       "ends after " + std::to_string(read_) + " requests, before the " +
                           std::to_string(taken) +
                           " the checkpoint had read (not the workload it was written for)");
    if (!every_rank_reads()) {
      Take();
      continue;
    }
    // Requests the checkpointed run made count as made, each by the rank that owns it now.
    if (RankOfGateway(GatewayOf(read_, gateways_), ranks_) == rank_) ++made_;
    ++read_;
  }
}

void WorkloadReader::Abandon() {
  exhausted_ = true;
  peeked_.reset();
  passed_.reset();
}

int64_t WorkloadReader::expected() const {
  if (exhausted()) return read_;
  return source_ ? source_->expected_requests().value_or(-1) : -1;
}

}  // namespace fleetsim
