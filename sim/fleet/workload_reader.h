// The workload as the fleet reads it: rank 0 alone opens the source and, each window,
// ships the window's arrivals to the ranks of their gateways (docs/DESIGN.md, "One
// reader"), so at most one window of requests is in flight and no other rank reads.
//
// A request's id is its position in the workload; its gateway is GatewayOf(id, G), which
// lives on rank RankOfGateway(gateway, R).
//
//   WorkloadReader reader(source, gateways);          // source: nullptr off rank 0
//   reader.ShipBefore(window_end, outgoing);          // outgoing[r]: bytes for rank r
//   ... exchange, then ParseRoutedRequests(received) at each rank ...
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/sim_time.h"
#include "fleet/routed_request.h"
#include "workload/workload_source.h"

namespace fleetsim {

// The gateway of request `id` among `gateways`: hash(id) mod G (SPEC.md).
int32_t GatewayOf(int64_t id, int gateways);
// The rank gateway `gateway` lives on, of `ranks`: gateway mod R.
int RankOfGateway(int32_t gateway, int ranks);

class WorkloadReader {
 public:
  // `source` is the workload on the reader rank and nullptr elsewhere.
  WorkloadReader(WorkloadSource* source, int gateways);

  // The next request (its id and gateway set), without taking it; nullptr at the end.
  const RoutedRequest* Peek();
  RoutedRequest Take();
  // Appends every request arriving before `stop` to the buffer of its gateway's rank
  // (outgoing.size() ranks), in workload order.
  void ShipBefore(SimTime stop, std::vector<std::vector<std::byte>>& outgoing);
  // After a read error: nothing more comes from the stream.
  void Abandon();
  // Requests handed on (shipped or taken) so far: the workload position a checkpoint
  // saves. SkipTo reads and drops that many from a fresh source, so the next one read is
  // the one the checkpointed run would read next (an InputError if the workload ends first).
  int64_t taken() const { return read_ - (peeked_ ? 1 : 0); }
  void SkipTo(int64_t taken);

  // Requests read so far; the workload's size once exhausted (0 off the reader rank).
  int64_t read() const { return read_; }
  bool exhausted() const { return exhausted_ && !peeked_; }
  // What the source promises at most, for the progress line (-1: unknown).
  int64_t expected() const;

 private:
  WorkloadSource* source_;
  int gateways_;
  int64_t read_ = 0;
  bool exhausted_;
  std::optional<RoutedRequest> peeked_;
};

}  // namespace fleetsim
