#include "output/row_range.h"

#include <stdexcept>
#include <string>

namespace fleetsim::output {
namespace {

void CheckMpi(int code, const char* what) {
  if (code != MPI_SUCCESS) throw std::runtime_error(std::string("RowRangeOf: ") + what + " failed");
}

}  // namespace

RowRange RowRangeOf(int64_t local_count, MPI_Comm comm) {
  const bool negative = local_count < 0;
  const int64_t count = negative ? 0 : local_count;

  int64_t offset = 0;
  CheckMpi(MPI_Exscan(&count, &offset, 1, MPI_INT64_T, MPI_SUM, comm), "MPI_Exscan");
  int rank = 0;
  CheckMpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  // MPI leaves rank 0's exclusive scan undefined.
  if (rank == 0) offset = 0;

  // The total and "did any rank pass a negative count" travel in one reduction.
  const int64_t local[2] = {count, negative ? 1 : 0};
  int64_t summed[2] = {0, 0};
  CheckMpi(MPI_Allreduce(local, summed, 2, MPI_INT64_T, MPI_SUM, comm), "MPI_Allreduce");
  if (summed[1] > 0) throw std::invalid_argument("RowRangeOf: a rank passed a negative row count");
  return {offset, summed[0]};
}

}  // namespace fleetsim::output
