// Puts rows of a table in global order across ranks: each row has a global index in
// [0, total), and rank r ends up with rows [total*r/R, total*(r+1)/R), sorted -- so the
// collective HDF5 write of per-rank hyperslabs gives the same file for any rank count.
// Every index must be present exactly once over all ranks (checked: nothing lost, nothing
// twice).
//
//   OrderedRows<RequestRow> mine = ExchangeRowsByIndex(rows, [](auto& r) { return r.id; },
//                                                      total, comm);
//   file.WriteTable("/requests", schema, mine.rows.data(), mine.offset, mine.size(), total);
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "comm/collectives.h"

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
                                     MPI_Comm comm) {
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

}  // namespace fleetsim
