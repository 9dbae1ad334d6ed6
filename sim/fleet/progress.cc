#include "fleet/progress.h"

#include <cstdio>
#include <string>

#include "core/format.h"

namespace fleetsim {

Progress::Progress(bool enabled)
    : enabled_(enabled), start_(std::chrono::steady_clock::now()), last_(start_) {}

void Progress::Update(SimTime now, int64_t finished, int64_t total, int64_t events) {
  if (!enabled_) return;
  const auto wall = std::chrono::steady_clock::now();
  if (wall - last_ < std::chrono::milliseconds(250)) return;
  last_ = wall;
  const double elapsed = std::chrono::duration<double>(wall - start_).count();
  std::string eta = "?";
  if (total > 0 && finished > 0) {
    eta =
        Fixed(elapsed * static_cast<double>(total - finished) / static_cast<double>(finished), 0) +
        " s";
  }
  const std::string of = total >= 0 ? " of " + std::to_string(total) : "";
  std::fprintf(stderr,
               "\r  t = %.1f s simulated | %lld%s requests finished | %.3g events/s | ETA %s   ",
               ToSeconds(now), static_cast<long long>(finished), of.c_str(),
               elapsed > 0 ? static_cast<double>(events) / elapsed : 0.0, eta.c_str());
  std::fflush(stderr);
  drawn_ = true;
}

void Progress::Done() {
  if (!drawn_) return;
  std::fprintf(stderr, "\r%100s\r", "");
  std::fflush(stderr);
  drawn_ = false;
}

}  // namespace fleetsim
