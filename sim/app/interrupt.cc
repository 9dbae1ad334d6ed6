#include "app/interrupt.h"

#include <atomic>
#include <csignal>
#include <signal.h>

namespace fleetsim {
namespace {

std::atomic<int> pending{0};
static_assert(std::atomic<int>::is_always_lock_free, "the signal handler needs a lock-free store");

struct sigaction previous_int;
struct sigaction previous_term;

// Async-signal-safe: an atomic exchange, and on a second signal signal() and raise().
extern "C" void RecordInterrupt(int signal_number) {
  if (pending.exchange(signal_number) != 0) {
    std::signal(signal_number, SIG_DFL);
    std::raise(signal_number);
  }
}

}  // namespace

InterruptHandlers::InterruptHandlers() {
  pending.store(0);
  struct sigaction action = {};
  action.sa_handler = RecordInterrupt;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;  // MPI and file calls go on; the loop looks at the flag
  sigaction(SIGINT, &action, &previous_int);
  sigaction(SIGTERM, &action, &previous_term);
}

InterruptHandlers::~InterruptHandlers() {
  sigaction(SIGINT, &previous_int, nullptr);
  sigaction(SIGTERM, &previous_term, nullptr);
}

int PendingInterrupt() {
  return pending.load();
}

const char* SignalName(int signal_number) {
  switch (signal_number) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    default:
      return "a signal";
  }
}

}  // namespace fleetsim
