// SIGINT and SIGTERM during `fleetsim run`. The first signal is acted on at once, in the
// handler, with async-signal-safe calls only: the unfinished output file (`<file>.tmp`) is
// removed and rank 0 prints the one line. The run itself stops at the next window
// boundary, where the ranks agree to stop together. Acting at once matters under mpirun,
// which sends its ranks SIGKILL odls_base_sigkill_timeout seconds (1 by default) after it
// passes SIGTERM on: on a loaded machine that can come before the window boundary, and
// then the line and the file's removal must already be done. A second signal takes its
// default action (for a run stuck before its next window).
//
// Once the file is being renamed into place (BeginCommit), a signal no longer stops the
// run: it is finishing, and removing the file then would lose a complete result.
//
//   const InterruptHandlers handlers("out.h5.tmp", rank == 0);  // for the life of the run
//   options.interrupted = PendingInterrupt;                      // 0, or SIGINT / SIGTERM
//   ... catch (const FleetInterrupted& e) { exit code 128 + e.signal }
#pragma once

#include <string>

namespace fleetsim {

class InterruptHandlers {
 public:
  // Installs the handlers for SIGINT and SIGTERM and clears any recorded signal.
  // `temporary_output`: the file to remove on the first signal; `announce`: whether this
  // process prints "fleetsim: interrupted (SIGTERM); no output written" then.
  InterruptHandlers(const std::string& temporary_output, bool announce);
  // Restores the handlers there were before.
  ~InterruptHandlers();
  InterruptHandlers(const InterruptHandlers&) = delete;
  InterruptHandlers& operator=(const InterruptHandlers&) = delete;
};

// The signal recorded since the handlers were installed (SIGINT or SIGTERM), or 0.
int PendingInterrupt();

// Whether the handler has printed the line already.
bool InterruptAnnounced();

// From now on a signal does not stop the run (its output is being committed); returns 0,
// or the signal that came first (then the run must stop: its file is gone).
int BeginCommit();

// "SIGINT", "SIGTERM", or "a signal".
const char* SignalName(int signal_number);

}  // namespace fleetsim
