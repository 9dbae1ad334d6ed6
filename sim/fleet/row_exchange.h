// Puts rows of a table in global order across ranks: each row has a global index in
// [0, total), and rank r ends up with rows [total*r/R, total*(r+1)/R), sorted -- so the
// collective HDF5 write of per-rank hyperslabs gives the same file for any rank count.
// Every index must be present exactly once over all ranks (checked: nothing lost, nothing
// twice).
//
//   OrderedRows<RequestRow> mine = JoinProcessRows(
//       ExchangeRowsByIndex(rows, [](auto& r) { return r.id; }, total, comm), comm);
//   if (comm.lead())
//     file.WriteTable("/requests", schema, mine.rows.data(), mine.offset, mine.size(), total);
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "comm/collectives.h"
#include "comm/communicator.h"

namespace fleetsim {

template <typename Row>
struct OrderedRows {
  int64_t offset = 0;
  std::vector<Row> rows;
  int64_t size() const { return static_cast<int64_t>(rows.size()); }
};

inline int64_t BlockBegin(int64_t total, int rank, int size) {
  return total * rank / size;  // exact while total * size < 2^63
}

template <typename Row, typename IndexOf>
OrderedRows<Row> ExchangeRowsByIndex(const std::vector<Row>& rows, IndexOf index_of, int64_t total,
                                     const comm::Comm& comm) {
  static_assert(std::is_trivially_copyable_v<Row>);
  const int size = comm::SizeOf(comm);
  const int rank = comm::RankOf(comm);
  constexpr std::size_t kRecord = sizeof(int64_t) + sizeof(Row);
  std::vector<std::vector<std::byte>> outgoing(static_cast<std::size_t>(size));
  for (const Row& row : rows) {
    const int64_t index = index_of(row);
    if (index < 0 || index >= total)
      throw std::logic_error("row index " + std::to_string(index) + " outside the table");
    int owner = static_cast<int>(index * size / total);
    while (owner + 1 < size && BlockBegin(total, owner + 1, size) <= index)
      ++owner;
    while (owner > 0 && BlockBegin(total, owner, size) > index)
      --owner;
    std::vector<std::byte>& out = outgoing[static_cast<std::size_t>(owner)];
    const std::size_t at = out.size();
    out.resize(at + kRecord);
    std::memcpy(out.data() + at, &index, sizeof index);
    std::memcpy(out.data() + at + sizeof index, &row, sizeof(Row));
  }
  const std::vector<std::byte> received = comm::ExchangeBytes(outgoing, comm);
  OrderedRows<Row> result;
  result.offset = BlockBegin(total, rank, size);
  const int64_t count = BlockBegin(total, rank + 1, size) - result.offset;
  if (received.size() != static_cast<std::size_t>(count) * kRecord)
    throw std::logic_error("rank " + std::to_string(rank) + " received " +
                           std::to_string(received.size() / kRecord) + " rows for " +
                           std::to_string(count) + " table positions");
  result.rows.resize(static_cast<std::size_t>(count));
  std::vector<bool> seen(static_cast<std::size_t>(count), false);
  for (std::size_t at = 0; at < received.size(); at += kRecord) {
    int64_t index = 0;
    std::memcpy(&index, received.data() + at, sizeof index);
    const auto slot = static_cast<std::size_t>(index - result.offset);
    if (index < result.offset || slot >= seen.size() || seen[slot])
      throw std::logic_error("row index " + std::to_string(index) + " twice or misrouted");
    seen[slot] = true;
    std::memcpy(&result.rows[slot], received.data() + at + sizeof index, sizeof(Row));
  }
  return result;
}

// A process's ranks (threads, comm/communicator.h) hold consecutive blocks of the table:
// on its lead thread, their rows joined in rank order, to be written as one hyperslab;
// nothing on the other threads. Collective over `comm`; where a rank is a process, `mine`.
template <typename Row>
OrderedRows<Row> JoinProcessRows(OrderedRows<Row> mine, const comm::Comm& comm) {
  comm::LocalRanks* local = comm.local();
  if (!local) return mine;
  OrderedRows<Row> joined;
  local->Meet(comm.thread(), "join rows", &mine, [&](std::span<const void* const> parts) {
    joined.offset = mine.offset;
    joined.rows = std::move(mine.rows);  // parts[0]: this thread's own
    for (std::size_t t = 1; t < parts.size(); ++t) {
      const auto& part = *static_cast<const OrderedRows<Row>*>(parts[t]);
      if (part.offset != joined.offset + joined.size())
        throw std::logic_error("a process's ranks hold blocks that are not consecutive");
      joined.rows.insert(joined.rows.end(), part.rows.begin(), part.rows.end());
    }
  });
  return joined;
}

}  // namespace fleetsim
