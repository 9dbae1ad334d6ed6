#include "comm/collectives.h"

#include <algorithm>
#include <cstring>
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

std::vector<std::byte> MpiExchangeBytes(const std::vector<std::vector<std::byte>>& outgoing,
                                        MPI_Comm comm) {
  int size = 1;
  MPI_Comm_size(comm, &size);
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

WindowExchange MpiExchangeWindow(const std::vector<std::vector<std::byte>>& outgoing,
                                 std::span<const int64_t> values, MPI_Comm comm) {
  int mpi_size = 1, mpi_rank = 0;
  MPI_Comm_size(comm, &mpi_size);
  MPI_Comm_rank(comm, &mpi_rank);
  const auto size = static_cast<std::size_t>(mpi_size);
  const auto rank = static_cast<std::size_t>(mpi_rank);
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

// Every rank's `values` folded into one, on every rank: a process's threads in memory
// (thread 0 folds its threads' parts), then the processes by MPI_Allreduce with `op`.
template <typename T, typename Fold>
void Reduce(std::span<T> values, const Comm& comm, MPI_Datatype type, MPI_Op op, const Fold& fold) {
  if (comm.size() == 1 || values.empty()) return;
  LocalRanks* local = comm.local();
  if (!local) {
    Check(MPI_Allreduce(MPI_IN_PLACE, values.data(), Int(values.size()), type, op, comm.mpi()),
          "MPI_Allreduce");
    return;
  }
  const std::span<const T> mine = values;
  local->Meet(
      comm.thread(), sizeof(T) == 4 ? "reduce int32" : "reduce int64", &mine,
      [&](std::span<const void* const> parts) {
        std::vector<T> total(mine.begin(), mine.end());
        for (std::size_t t = 1; t < parts.size(); ++t) {
          const auto& part = *static_cast<const std::span<const T>*>(parts[t]);
          if (part.size() != total.size())
            throw std::invalid_argument("a reduction over threads of unequal lengths");
          fold(std::span<T>(total), part);
        }
        if (comm.processes() > 1)
          Check(MPI_Allreduce(MPI_IN_PLACE, total.data(), Int(total.size()), type, op, comm.mpi()),
                "MPI_Allreduce");
        local->values.assign(total.begin(), total.end());
      });
  std::transform(local->values.begin(), local->values.end(), values.begin(),
                 [](int64_t v) { return static_cast<T>(v); });
}

template <typename T>
void FoldSum(std::span<T> into, std::span<const T> part) {
  for (std::size_t i = 0; i < into.size(); ++i)
    into[i] += part[i];
}

template <typename T>
void FoldMinSum(std::span<T> into, std::span<const T> part) {
  into[0] = std::min(into[0], part[0]);
  for (std::size_t i = 1; i < into.size(); ++i)
    into[i] += part[i];
}

// One rank's side of a threaded exchange: its buffers to every rank, and its values.
struct ExchangePart {
  const std::vector<std::vector<std::byte>>* outgoing;
  std::span<const int64_t> values;
};

void AppendSized(std::vector<std::byte>& out, const std::vector<std::byte>& bytes) {
  const uint64_t n = bytes.size();
  const std::size_t at = out.size();
  out.resize(at + sizeof n + bytes.size());
  std::memcpy(out.data() + at, &n, sizeof n);
  std::copy(bytes.begin(), bytes.end(), out.begin() + static_cast<std::ptrdiff_t>(at + sizeof n));
}

// ExchangeWindow's lead, on thread 0 of a process of `threads`: each local rank's bytes
// (local->bytes[u]) from every rank in rank order, and every rank's values (local->values).
// Between processes each sends each other one buffer: for each of the receiver's threads
// u, for each of its own threads t, the size and bytes of t's buffer to u.
void LeadExchange(std::span<const void* const> parts, const Comm& comm) {
  LocalRanks& local = *comm.local();
  const auto threads = static_cast<std::size_t>(comm.threads());
  const auto processes = static_cast<std::size_t>(comm.processes());
  const auto part = [&](std::size_t t) -> const ExchangePart& {
    return *static_cast<const ExchangePart*>(parts[t]);
  };
  local.values.clear();
  for (std::size_t t = 0; t < threads; ++t)
    local.values.insert(local.values.end(), part(t).values.begin(), part(t).values.end());
  for (std::vector<std::byte>& b : local.bytes)
    b.clear();
  if (processes == 1) {
    for (std::size_t u = 0; u < threads; ++u) {
      for (std::size_t t = 0; t < threads; ++t) {
        const std::vector<std::byte>& from = (*part(t).outgoing)[u];
        local.bytes[u].insert(local.bytes[u].end(), from.begin(), from.end());
      }
    }
    return;
  }
  std::vector<std::vector<std::byte>> to_process(processes);
  for (std::size_t q = 0; q < processes; ++q) {
    for (std::size_t u = 0; u < threads; ++u) {
      for (std::size_t t = 0; t < threads; ++t)
        AppendSized(to_process[q], (*part(t).outgoing)[q * threads + u]);
    }
  }
  WindowExchange got = MpiExchangeWindow(to_process, local.values, comm.mpi());
  local.values = std::move(got.values);
  // Source processes in order, each of its threads in order: rank order.
  std::size_t at = 0;
  for (std::size_t p = 0; p < processes; ++p) {
    for (std::size_t u = 0; u < threads; ++u) {
      for (std::size_t t = 0; t < threads; ++t) {
        uint64_t n = 0;
        if (at + sizeof n > got.bytes.size())
          throw std::runtime_error("a threaded exchange received a short buffer");
        std::memcpy(&n, got.bytes.data() + at, sizeof n);
        at += sizeof n;
        if (n > got.bytes.size() - at)
          throw std::runtime_error("a threaded exchange received a short buffer");
        const auto first = got.bytes.begin() + static_cast<std::ptrdiff_t>(at);
        local.bytes[u].insert(local.bytes[u].end(), first, first + static_cast<std::ptrdiff_t>(n));
        at += static_cast<std::size_t>(n);
      }
    }
  }
}

}  // namespace

std::vector<std::byte> ExchangeBytes(const std::vector<std::vector<std::byte>>& outgoing,
                                     const Comm& comm) {
  if (outgoing.size() != static_cast<std::size_t>(comm.size()))
    throw std::invalid_argument("ExchangeBytes: one buffer per rank");
  if (comm.size() == 1) return outgoing[0];
  if (!comm.local()) return MpiExchangeBytes(outgoing, comm.mpi());
  return ExchangeWindow(outgoing, {}, comm).bytes;
}

WindowExchange ExchangeWindow(const std::vector<std::vector<std::byte>>& outgoing,
                              std::span<const int64_t> values, const Comm& comm) {
  if (outgoing.size() != static_cast<std::size_t>(comm.size()))
    throw std::invalid_argument("ExchangeWindow: one buffer per rank");
  if (!comm.local()) return MpiExchangeWindow(outgoing, values, comm.mpi());
  LocalRanks& local = *comm.local();
  const ExchangePart mine{&outgoing, values};
  local.Meet(comm.thread(), "exchange", &mine,
             [&](std::span<const void* const> parts) { LeadExchange(parts, comm); });
  WindowExchange result;
  result.bytes = std::move(local.bytes[static_cast<std::size_t>(comm.thread())]);
  result.values = local.values;
  return result;
}

void AllReduceMinSum(std::span<int64_t> values, const Comm& comm) {
  Reduce(values, comm, MPI_INT64_T, MinSumOp(), FoldMinSum<int64_t>);
}

void AllReduceSum(std::span<int64_t> values, const Comm& comm) {
  Reduce(values, comm, MPI_INT64_T, MPI_SUM, FoldSum<int64_t>);
}

void AllReduceSum(std::span<int32_t> values, const Comm& comm) {
  Reduce(values, comm, MPI_INT32_T, MPI_SUM, FoldSum<int32_t>);
}

int64_t AllReduceMin(int64_t value, const Comm& comm) {
  Reduce(std::span<int64_t>(&value, 1), comm, MPI_INT64_T, MPI_MIN,
         [](std::span<int64_t> into, std::span<const int64_t> part) {
           into[0] = std::min(into[0], part[0]);
         });
  return value;
}

int64_t AllReduceMax(int64_t value, const Comm& comm) {
  Reduce(std::span<int64_t>(&value, 1), comm, MPI_INT64_T, MPI_MAX,
         [](std::span<int64_t> into, std::span<const int64_t> part) {
           into[0] = std::max(into[0], part[0]);
         });
  return value;
}

std::string BroadcastString(const std::string& value, const Comm& comm) {
  if (comm.size() == 1) return value;
  std::string out = comm.process() == 0 ? value : std::string();
  const auto broadcast = [&](std::string& s) {
    if (comm.processes() == 1) return;
    int64_t size = static_cast<int64_t>(s.size());
    Check(MPI_Bcast(&size, 1, MPI_INT64_T, 0, comm.mpi()), "MPI_Bcast");
    s.resize(static_cast<std::size_t>(size));
    Check(MPI_Bcast(s.data(), Int(s.size()), MPI_CHAR, 0, comm.mpi()), "MPI_Bcast");
  };
  LocalRanks* local = comm.local();
  if (!local) {
    broadcast(out);
    return out;
  }
  local->Meet(comm.thread(), "broadcast", nullptr, [&](std::span<const void* const>) {
    broadcast(out);  // thread 0's copy: rank 0's value on process 0
    local->bytes[0].resize(out.size());
    std::memcpy(local->bytes[0].data(), out.data(), out.size());
  });
  const std::vector<std::byte>& shared = local->bytes[0];
  return std::string(reinterpret_cast<const char*>(shared.data()), shared.size());
}

}  // namespace fleetsim::comm
