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

WindowExchange ExchangeWindow(const std::vector<std::vector<std::byte>>& outgoing,
                              std::span<const int64_t> values, MPI_Comm comm) {
  const auto size = static_cast<std::size_t>(SizeOf(comm));
  const auto rank = static_cast<std::size_t>(RankOf(comm));
  if (outgoing.size() != size) throw std::invalid_argument("ExchangeWindow: one buffer per rank");
  WindowExchange result;
  const std::size_t width = 1 + values.size();
  if (size == 1) {
    result.bytes = outgoing[0];
    result.values.assign(values.begin(), values.end());
    return result;
  }
  std::vector<int64_t> send(size * width), recv(size * width);
  for (std::size_t d = 0; d < size; ++d) {
    send[d * width] = static_cast<int64_t>(outgoing[d].size());
    std::copy(values.begin(), values.end(),
              send.begin() + static_cast<std::ptrdiff_t>(d * width + 1));
  }
  Check(MPI_Alltoall(send.data(), Int(width), MPI_INT64_T, recv.data(), Int(width), MPI_INT64_T,
                     comm),
        "MPI_Alltoall");
  result.values.resize(size * values.size());
  std::vector<std::size_t> offset(size + 1, 0);
  for (std::size_t s = 0; s < size; ++s) {
    std::copy_n(recv.begin() + static_cast<std::ptrdiff_t>(s * width + 1), values.size(),
                result.values.begin() + static_cast<std::ptrdiff_t>(s * values.size()));
    offset[s + 1] = offset[s] + static_cast<std::size_t>(recv[s * width]);
  }
  result.bytes.resize(offset[size]);
  std::vector<MPI_Request> requests;
  constexpr int kTag = 7301;
  for (std::size_t s = 0; s < size; ++s) {
    const std::size_t n = offset[s + 1] - offset[s];
    if (n == 0) continue;
    if (s == rank) {
      std::copy(outgoing[rank].begin(), outgoing[rank].end(),
                result.bytes.begin() + static_cast<std::ptrdiff_t>(offset[s]));
      continue;
    }
    requests.emplace_back();
    Check(MPI_Irecv(result.bytes.data() + offset[s], Int(n), MPI_BYTE, static_cast<int>(s), kTag,
                    comm, &requests.back()),
          "MPI_Irecv");
  }
  for (std::size_t d = 0; d < size; ++d) {
    if (d == rank || outgoing[d].empty()) continue;
    requests.emplace_back();
    Check(MPI_Isend(outgoing[d].data(), Int(outgoing[d].size()), MPI_BYTE, static_cast<int>(d),
                    kTag, comm, &requests.back()),
          "MPI_Isend");
  }
  Check(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE),
        "MPI_Waitall");
  return result;
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

std::string BroadcastString(const std::string& value, MPI_Comm comm) {
  if (SizeOf(comm) == 1) return value;
  int64_t size = static_cast<int64_t>(value.size());
  Check(MPI_Bcast(&size, 1, MPI_INT64_T, 0, comm), "MPI_Bcast");
  std::string out = RankOf(comm) == 0 ? value : std::string(static_cast<std::size_t>(size), '\0');
  Check(MPI_Bcast(out.data(), Int(out.size()), MPI_CHAR, 0, comm), "MPI_Bcast");
  return out;
}

}  // namespace fleetsim::comm
