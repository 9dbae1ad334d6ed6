// The few collectives a parallel fleet run needs, on bytes and integers only (comm/ knows
// nothing of requests or engines). Every function is collective over `comm`: each rank
// calls it in the same order. On a communicator of one rank they do no MPI at all; where
// ranks are threads of one process (communicator.h) those meet in memory, and their
// process talks MPI once.
//
//   std::vector<std::vector<std::byte>> out(size);       // one buffer per destination
//   std::vector<std::byte> in = comm::ExchangeBytes(out, MPI_COMM_WORLD);
//   int64_t agreed[3] = {next_event, finished, events};
//   comm::AllReduceMinSum(agreed, MPI_COMM_WORLD);        // min of [0], sums of the rest
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <mpi.h>

#include "comm/communicator.h"

namespace fleetsim::comm {

inline int RankOf(const Comm& comm) {
  return comm.rank();
}
inline int SizeOf(const Comm& comm) {
  return comm.size();
}

// Sends outgoing[d] to rank d (one message per destination, empty ones included in the
// counts exchange only); returns the bytes received, concatenated in source-rank order.
std::vector<std::byte> ExchangeBytes(const std::vector<std::vector<std::byte>>& outgoing,
                                     const Comm& comm);

// A batched exchange in a single collective: every rank sends outgoing[d] to rank d
// together with `values` (the same for every destination), and gets back what each rank
// sent it plus every rank's values. A small MPI_Alltoall carries the sizes and values;
// the bytes then travel point to point, only where there are any.
struct WindowExchange {
  std::vector<std::byte> bytes;  // received, concatenated in source-rank order
  std::vector<int64_t> values;   // rank r's values at [r * values.size() / size, ...)
};
WindowExchange ExchangeWindow(const std::vector<std::vector<std::byte>>& outgoing,
                              std::span<const int64_t> values, const Comm& comm);

// values[0] becomes the minimum over ranks, values[1..] the sums: one reduction for the
// window agreement (next event time, and counters).
void AllReduceMinSum(std::span<int64_t> values, const Comm& comm);

void AllReduceSum(std::span<int64_t> values, const Comm& comm);
void AllReduceSum(std::span<int32_t> values, const Comm& comm);
int64_t AllReduceMin(int64_t value, const Comm& comm);
// Rank 0's `value`, on every rank.
std::string BroadcastString(const std::string& value, const Comm& comm);
int64_t AllReduceMax(int64_t value, const Comm& comm);

}  // namespace fleetsim::comm
