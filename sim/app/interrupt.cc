#include "app/interrupt.h"

#include <atomic>
#include <csignal>
#include <cstring>
#include <signal.h>
#include <unistd.h>

namespace fleetsim {
namespace {

// 0: running; SIGINT or SIGTERM: stopped by that signal; kCommitting: finishing.
constexpr int kCommitting = -1;
std::atomic<int> state{0};
std::atomic<int> signals_seen{0};
std::atomic<bool> announced{false};
static_assert(std::atomic<int>::is_always_lock_free, "the signal handler needs lock-free atomics");
static_assert(std::atomic<bool>::is_always_lock_free, "the signal handler needs lock-free atomics");

// What the handler needs, prepared before it is installed: it may not allocate.
char temporary_path[4096];
bool announce_here = false;
constexpr const char kLineInt[] = "fleetsim: interrupted (SIGINT); no output written\n";
constexpr const char kLineTerm[] = "fleetsim: interrupted (SIGTERM); no output written\n";

struct sigaction previous_int;
struct sigaction previous_term;

// Async-signal-safe: atomics, unlink, write, signal and raise.
extern "C" void OnInterrupt(int signal_number) {
  if (signals_seen.fetch_add(1) > 0) {  // the second signal: stop now
    std::signal(signal_number, SIG_DFL);
    std::raise(signal_number);
    return;
  }
  int expected = 0;
  if (!state.compare_exchange_strong(expected, signal_number)) return;  // committing
  if (temporary_path[0] != '\0') ::unlink(temporary_path);
  if (announce_here) {
    const char* line = signal_number == SIGINT ? kLineInt : kLineTerm;
    const std::size_t size = signal_number == SIGINT ? sizeof kLineInt - 1 : sizeof kLineTerm - 1;
    if (::write(STDERR_FILENO, line, size) == static_cast<ssize_t>(size)) announced.store(true);
  }
}

}  // namespace

InterruptHandlers::InterruptHandlers(const std::string& temporary_output, bool announce) {
  state.store(0);
  signals_seen.store(0);
  announced.store(false);
  temporary_path[0] = '\0';
  if (temporary_output.size() < sizeof temporary_path) {
    std::memcpy(temporary_path, temporary_output.c_str(), temporary_output.size() + 1);
  }
  announce_here = announce;
  struct sigaction action = {};
  action.sa_handler = OnInterrupt;
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
  const int now = state.load();
  return now == kCommitting ? 0 : now;
}

bool InterruptAnnounced() {
  return announced.load();
}

int BeginCommit() {
  int expected = 0;
  if (state.compare_exchange_strong(expected, kCommitting)) return 0;
  return expected == kCommitting ? 0 : expected;
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
