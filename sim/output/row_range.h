// Where one rank's rows go in a table whose rows are split across ranks: rank r's rows
// start after those of ranks 0..r-1, so the file's row order is rank order -- the same
// order however the rows were produced inside each rank.
//
//   const RowRange range = RowRangeOf(static_cast<int64_t>(rows.size()), comm);
//   file.WriteTable("/requests", schema, rows.data(), range.offset,
//                   static_cast<int64_t>(rows.size()), range.total);
#pragma once

#include <cstdint>

#include <mpi.h>

namespace fleetsim::output {

struct RowRange {
  int64_t offset = 0;  // rows held by lower ranks
  int64_t total = 0;   // rows held by all ranks
};

// Collective over `comm`. A negative count on any rank throws std::invalid_argument on
// every rank (after the communication, so no rank is left waiting).
RowRange RowRangeOf(int64_t local_count, MPI_Comm comm);

}  // namespace fleetsim::output
