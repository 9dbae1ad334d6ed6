// Keeps ranks in step when something fails inside a collective operation. If one rank
// threw and walked away while the others went on to the next collective HDF5 or MPI call,
// the job would hang instead of failing. A step runs on every rank and then the ranks
// agree: if it failed anywhere, every rank throws the same message (the lowest failing
// rank's). Private to fleetsim_output.
//
//   RunCollectiveStep(comm, [&] { dataset = CreateDataset(...); });  // all ranks, or none
//   CheckStatus(H5Dwrite(...), ...);                                    // safe to enter
#pragma once

#include <functional>
#include <string>

#include <mpi.h>

namespace fleetsim::output::internal {

// A private duplicate of a communicator, freed on destruction (unless MPI is already
// finalised), so this library's messages can never match the caller's.
class DuplicatedComm {
 public:
  explicit DuplicatedComm(MPI_Comm comm);
  ~DuplicatedComm();
  DuplicatedComm(const DuplicatedComm&) = delete;
  DuplicatedComm& operator=(const DuplicatedComm&) = delete;

  MPI_Comm get() const { return comm_; }
  int rank() const { return rank_; }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
};

// Runs `step` (which must not itself communicate after a possible throw), then agrees.
// Throws std::runtime_error on every rank if `step` threw std::exception on any.
void RunCollectiveStep(MPI_Comm comm, const std::function<void()>& step);

// `text` as `root` has it, on every rank of `comm`.
std::string BroadcastText(const std::string& text, int root, MPI_Comm comm);

// Throws std::runtime_error("<what> failed") when an MPI call did not succeed.
void CheckMpi(int code, const std::string& what);

}  // namespace fleetsim::output::internal
