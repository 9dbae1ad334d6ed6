// SIGINT and SIGTERM during `fleetsim run`. The handler only records the signal (one
// lock-free atomic store, async-signal-safe); the fleet's window loop reads it at each
// window boundary, where the ranks agree to stop together, the unfinished output file is
// removed and rank 0 prints one line. A second signal while the first is pending takes the
// signal's default action at once (for a run stuck before its next window).
//
//   const InterruptHandlers handlers;            // for the life of the run
//   options.interrupted = PendingInterrupt;      // 0, or SIGINT / SIGTERM
//   ... catch (const FleetInterrupted& e) { exit code 128 + e.signal }
#pragma once

namespace fleetsim {

class InterruptHandlers {
 public:
  // Installs the handlers for SIGINT and SIGTERM and clears any recorded signal.
  InterruptHandlers();
  // Restores the handlers there were before.
  ~InterruptHandlers();
  InterruptHandlers(const InterruptHandlers&) = delete;
  InterruptHandlers& operator=(const InterruptHandlers&) = delete;
};

// The signal recorded since the handlers were installed (SIGINT or SIGTERM), or 0.
int PendingInterrupt();

// "SIGINT", "SIGTERM", or "a signal".
const char* SignalName(int signal_number);

}  // namespace fleetsim
