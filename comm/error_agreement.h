// The one cross-rank error agreement of every collective command (run, sweep, validate):
// whatever fails on some ranks, every rank learns of it at the next agreement, exactly one
// rank holds the error to print, and every rank leaves with the same exit code -- none is
// left waiting in a collective, and a run on N ranks prints one line, not N.
//
// A rank-local part that may fail runs under a RankFailure, which holds what it throws
// (the first failure; later parts are skipped). AgreeOnFailure is the meeting: when no
// rank holds a failure it returns; otherwise every rank throws -- the rank holding the
// failure that comes first (the lowest `order`, then one not yet reported, then the lowest
// rank) rethrows it, every other rank throws QuietExit with that failure's exit code.
// After an agreement exactly one rank holds an error that is not QuietExit, and
// ReportFailures, around a command's body, prints it there -- before MPI_Finalize, while
// every rank is still alive, so that mpirun cannot stop the reporter before it speaks.
//
//   comm::ReportFailures([&] {                       // a command's body, on every rank
//     comm::OnRankZero(comm, [&] { source = OpenWorkload(path, format); });
//     comm::RankFailure failure;
//     failure.Guard([&] { RouteMyShare(); });         // may fail on some ranks only
//     comm::AgreeOnFailure(failure, comm);            // every rank meets here
//   });
//
// A loop that meets anyway (the fleet's windows) carries failure.count() in its own
// reduction and calls AgreeOnFailure only when the sum is positive: no extra message in a
// window without errors.
#pragma once

#include <cstdint>
#include <exception>
#include <utility>

#include "comm/communicator.h"
#include "core/input_error.h"

namespace fleetsim::comm {

// The exit code a failure ends the process with: an InputError kExitInputError (2), a
// QuietExit its own code, anything else 1.
int ExitCodeOf(const std::exception_ptr& error);

class RankFailure {
 public:
  // Runs `part` unless this rank already failed; holds what it throws. `order` ranks
  // failures across ranks (a sweep gives its point's index: the lowest point speaks).
  template <typename Part>
  void Guard(Part&& part, int64_t order = 0) {
    if (error_) return;
    try {
      std::forward<Part>(part)();
    } catch (...) {
      Hold(std::current_exception(), order);
    }
  }
  // Holds `error` unless a failure is held already (the first one stands).
  void Hold(std::exception_ptr error, int64_t order = 0);

  bool failed() const { return error_ != nullptr; }
  // 1 when failed, else 0: for a reduction the caller makes anyway.
  int64_t count() const { return failed() ? 1 : 0; }
  int code() const { return code_; }
  int64_t order() const { return order_; }
  // A QuietExit: an earlier agreement's reporter has the error to print.
  bool reported() const { return reported_; }
  const std::exception_ptr& error() const { return error_; }

 private:
  std::exception_ptr error_;
  int code_ = 0;
  int64_t order_ = 0;
  bool reported_ = false;
};

// Collective over `comm`: returns on every rank when no rank failed, else throws on every
// rank as described above. On a communicator of one rank it does no MPI at all.
void AgreeOnFailure(const RankFailure& mine, const Comm& comm);

// Whether `error` is the failure an agreement rethrew on this rank (the last one): every
// rank knows of it, so it needs no abort -- unlike a failure a rank met alone outside the
// agreed parts, which may leave the others waiting in a collective.
bool Agreed(const std::exception_ptr& error);
// Makes `error`, which an agreement rethrew on another thread of this process (a rank of
// its own, communicator.h), the one Agreed() knows on this thread.
void AdoptAgreed(const std::exception_ptr& error);

// Runs `part` on every rank, then agrees.
template <typename Part>
void OnEveryRank(const Comm& comm, Part&& part, int64_t order = 0) {
  RankFailure failure;
  failure.Guard(std::forward<Part>(part), order);
  AgreeOnFailure(failure, comm);
}

// Runs `part` on rank 0 of `comm` alone (reading the workload, moving a point's files),
// then agrees: the other ranks learn whether it failed.
template <typename Part>
void OnRankZero(const Comm& comm, Part&& part) {
  RankFailure failure;
  if (comm.rank() == 0) failure.Guard(std::forward<Part>(part));
  AgreeOnFailure(failure, comm);
}

// Prints `error` as ReportFailures does (nothing for a QuietExit), then throws QuietExit
// with its exit code.
[[noreturn]] void ReportAndExit(const std::exception_ptr& error);

// Runs a command's body. An error it throws that is not a QuietExit -- the one rank an
// agreement left it to -- is printed here as one line ("fleetsim: error: ..." for an
// InputError, "fleetsim: internal error: ..." otherwise) and leaves as QuietExit with its
// exit code. Anything that is not an exception of the standard library passes through.
template <typename Body>
void ReportFailures(Body&& body) {
  try {
    std::forward<Body>(body)();
  } catch (const QuietExit&) {
    throw;
  } catch (const std::exception&) {
    ReportAndExit(std::current_exception());
  }
}

}  // namespace fleetsim::comm
