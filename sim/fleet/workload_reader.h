// The workload as the fleet reads it (docs/DESIGN.md, "Readers"). Either rank 0 alone
// opens the source and, each window, ships the window's arrivals to the ranks of their
// gateways, so at most one window of requests is in flight and no other rank reads; or,
// for a source that can pass over a request (a generator), every rank reads its own copy
// and makes only its own gateways' requests, passing over the others' with their arrivals
// alone, and nothing is shipped. Either way a reader reads one
// request past the last it handed on, no further, so every rank stands where one reader
// would (and meets a bad request when one reader would).
//
// A request's id is its position in the workload; its gateway is GatewayOf(id, G), which
// lives on rank RankOfGateway(gateway, R).
//
//   WorkloadReader reader(source, gateways);          // source: nullptr off rank 0
//   reader.ShipBefore(window_end, outgoing, inbox);   // outgoing[r]: bytes for rank r > 0
//   ... exchange, then ParseRoutedRequests(received) at each other rank ...
//
//   WorkloadReader mine(own_source, gateways, rank, ranks);  // every rank reads
//   mine.TakeBefore(window_end, inbox);               // this rank's gateways' arrivals
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
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
  // Rank 0 alone reads: `source` is the workload there and nullptr elsewhere.
  WorkloadReader(WorkloadSource* source, int gateways);
  // Every rank reads: `source` is this rank's own copy of the workload, one that can
  // pass over a request; this reader makes the requests of rank `rank` of `ranks`.
  WorkloadReader(WorkloadSource* source, int gateways, int rank, int ranks);

  bool every_rank_reads() const { return ranks_ > 0; }

  // The next request's arrival, whoever makes it; nullopt at the end.
  std::optional<SimTime> NextArrival();
  // The next request this reader makes (its id and gateway set), without taking it;
  // nullptr at the end. Where every rank reads, this passes over other ranks' requests
  // up to it (for the rest of a run cut short: see NextArrival to look ahead).
  const RoutedRequest* Peek();
  RoutedRequest Take();
  // Rank 0 alone reads: appends every request arriving before `stop` to the buffer of
  // its gateway's rank (outgoing.size() ranks), in workload order -- rank 0's own to
  // `own` as they are, without the wire form.
  void ShipBefore(SimTime stop, std::vector<std::vector<std::byte>>& outgoing,
                  std::deque<RoutedRequest>& own);
  // Every rank reads: appends this rank's requests arriving before `stop` to `inbox`, in
  // workload order.
  void TakeBefore(SimTime stop, std::deque<RoutedRequest>& inbox);
  // After a read error: nothing more comes from the stream.
  void Abandon();
  // The workload position before which this reader has handed on (shipped or taken)
  // every request it makes: the run's position, which a checkpoint saves, is the least
  // of it over the ranks (a rank that reads nothing has no bound: the largest int64).
  // SkipTo moves a fresh reader past that many requests, so the next one it makes is the
  // one the checkpointed run would have made next (an InputError if the workload ends
  // first).
  int64_t taken() const;
  void SkipTo(int64_t taken);

  // Requests made here so far, those a restart skipped included (the workload's size,
  // summed over the readers, once all are exhausted).
  int64_t made() const { return made_; }
  bool exhausted() const { return exhausted_ && !peeked_ && !passed_; }
  // What the source promises at most, for the progress line (-1: unknown).
  int64_t expected() const;

 private:
  // Moves the source one request on: makes it into peeked_ when it is this reader's,
  // passes over it into passed_ otherwise; false at the end of the workload.
  bool Advance();
  // Moves on to the next request unless one is peeked or passed over already.
  void LookAhead();

  WorkloadSource* source_;
  int gateways_;
  int rank_ = 0;
  int ranks_ = 0;     // 0: rank 0 alone reads
  int64_t read_ = 0;  // the position: requests made or passed over
  int64_t made_ = 0;
  bool exhausted_;
  std::optional<RoutedRequest> peeked_;
  std::optional<SimTime> passed_;  // the arrival of the next request, another rank's
};

}  // namespace fleetsim
