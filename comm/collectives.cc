#include "comm/collectives.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace fleetsim::comm {
namespace {

void Check(int code, const char* what) {
  if (code != MPI_SUCCESS) throw std::runtime_error(std::string("MPI failed in ") + what);
}

// MPI_Op for AllReduceMinSum: element 0 by minimum, the rest by sum.
void MinSum(void* in, void* inout, int* len, MPI_Datatype*) {
  const auto* a = static_cast<const int64_t*>(in);
  auto* b = static_cast<int64_t*>(inout);
  if (*len == 0) return;
  b[0] = std::min(a[0], b[0]);
  for (int i = 1; i < *len; ++i)
    b[i] += a[i];
}

MPI_Op MinSumOp() {
  // Created once, on first use, by the thread that talks MPI; freed by MPI_Finalize.
  static MPI_Op op = [] {
    MPI_Op created;
    Check(MPI_Op_create(&MinSum, /*commute=*/1, &created), "MPI_Op_create");
    return created;
  }();
  return op;
}

int Int(std::size_t n) {
  if (n > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    throw std::runtime_error("an MPI message over 2 GiB");
  return static_cast<int>(n);
}

}  // namespace

int RankOf(MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  return rank;
}

int SizeOf(MPI_Comm comm) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  return size;
}

std::vector<std::byte> ExchangeBytes(const std::vector<std::vector<std::byte>>& outgoing,
                                     MPI_Comm comm) {
  const int size = SizeOf(comm);
  if (outgoing.size() != static_cast<std::size_t>(size))
    throw std::invalid_argument("ExchangeBytes: one buffer per rank");
  if (size == 1) return outgoing[0];
  std::vector<int> send_counts(static_cast<std::size_t>(size));
  std::vector<int> send_offsets(static_cast<std::size_t>(size));
  std::vector<std::byte> send;
  for (std::size_t d = 0; d < outgoing.size(); ++d) {
    send_offsets[d] = Int(send.size());
    send_counts[d] = Int(outgoing[d].size());
    send.insert(send.end(), outgoing[d].begin(), outgoing[d].end());
  }
  std::vector<int> recv_counts(static_cast<std::size_t>(size));
  Check(MPI_Alltoall(send_counts.data(), 1, MPI_INT, recv_counts.data(), 1, MPI_INT, comm),
        "MPI_Alltoall");
  std::vector<int> recv_offsets(static_cast<std::size_t>(size));
  std::size_t total = 0;
  for (std::size_t s = 0; s < recv_counts.size(); ++s) {
    recv_offsets[s] = Int(total);
    total += static_cast<std::size_t>(recv_counts[s]);
  }
  std::vector<std::byte> received(total);
  Check(MPI_Alltoallv(send.data(), send_counts.data(), send_offsets.data(), MPI_BYTE,
                      received.data(), recv_counts.data(), recv_offsets.data(), MPI_BYTE, comm),
        "MPI_Alltoallv");
  return received;
}

void AllReduceMinSum(std::span<int64_t> values, MPI_Comm comm) {
  if (SizeOf(comm) == 1 || values.empty()) return;
  Check(
      MPI_Allreduce(MPI_IN_PLACE, values.data(), Int(values.size()), MPI_INT64_T, MinSumOp(), comm),
      "MPI_Allreduce");
}

void AllReduceSum(std::span<int64_t> values, MPI_Comm comm) {
  if (SizeOf(comm) == 1 || values.empty()) return;
  Check(MPI_Allreduce(MPI_IN_PLACE, values.data(), Int(values.size()), MPI_INT64_T, MPI_SUM, comm),
        "MPI_Allreduce");
}

void AllReduceSum(std::span<int32_t> values, MPI_Comm comm) {
  if (SizeOf(comm) == 1 || values.empty()) return;
  Check(MPI_Allreduce(MPI_IN_PLACE, values.data(), Int(values.size()), MPI_INT32_T, MPI_SUM, comm),
        "MPI_Allreduce");
}

int64_t AllReduceMin(int64_t value, MPI_Comm comm) {
  if (SizeOf(comm) > 1)
    Check(MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_INT64_T, MPI_MIN, comm), "MPI_Allreduce");
  return value;
}

int64_t AllReduceMax(int64_t value, MPI_Comm comm) {
  if (SizeOf(comm) > 1)
    Check(MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_INT64_T, MPI_MAX, comm), "MPI_Allreduce");
  return value;
}

}  // namespace fleetsim::comm
