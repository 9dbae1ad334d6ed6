#include "output/internal/collective_step.h"

#include <exception>
#include <stdexcept>

namespace fleetsim::output::internal {

void CheckMpi(int code, const std::string& what) {
  if (code != MPI_SUCCESS)
    throw std::runtime_error(what + " failed (MPI error " + std::to_string(code) + ")");
}

DuplicatedComm::DuplicatedComm(MPI_Comm comm) {
  CheckMpi(MPI_Comm_dup(comm, &comm_), "MPI_Comm_dup");
  CheckMpi(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
}

DuplicatedComm::~DuplicatedComm() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

std::string BroadcastText(const std::string& text, int root, MPI_Comm comm) {
  int rank = 0;
  CheckMpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  unsigned long long length = text.size();
  CheckMpi(MPI_Bcast(&length, 1, MPI_UNSIGNED_LONG_LONG, root, comm), "MPI_Bcast");
  std::string received = rank == root ? text : std::string(length, '\0');
  // Messages are short; an int count is plenty.
  CheckMpi(MPI_Bcast(received.data(), static_cast<int>(length), MPI_CHAR, root, comm), "MPI_Bcast");
  return received;
}

void RunCollectiveStep(MPI_Comm comm, const std::function<void()>& step) {
  std::string error;
  bool failed = false;
  try {
    step();
  } catch (const std::exception& e) {
    failed = true;
    error = e.what();
  }
  int rank = 0;
  int size = 1;
  CheckMpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  CheckMpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  // The lowest failing rank speaks for all; `size` means nobody failed.
  const int mine = failed ? rank : size;
  int first_failed = size;
  CheckMpi(MPI_Allreduce(&mine, &first_failed, 1, MPI_INT, MPI_MIN, comm), "MPI_Allreduce");
  if (first_failed == size) return;
  std::string message = BroadcastText(error, first_failed, comm);
  if (size > 1) message += " (on rank " + std::to_string(first_failed) + ")";
  throw std::runtime_error(message);
}

}  // namespace fleetsim::output::internal
