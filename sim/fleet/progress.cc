#include "fleet/progress.h"

#include <string>
#include <unistd.h>

#include "core/format.h"

namespace fleetsim {

Progress::Progress(bool enabled)
    : Progress(enabled, isatty(STDERR_FILENO) ? Style::kRedrawnLine : Style::kPeriodicLines,
               stderr) {}

Progress::Progress(bool enabled, Style style, std::FILE* out,
                   std::chrono::milliseconds line_interval)
    : enabled_(enabled),
      style_(style),
      out_(out),
      interval_(style == Style::kRedrawnLine ? std::chrono::milliseconds(250) : line_interval),
      start_(std::chrono::steady_clock::now()),
      last_(start_) {}

std::string Progress::Text(SimTime now, int64_t finished, int64_t total, int64_t events,
                           double elapsed) const {
  std::string eta = "?";
  if (total > 0 && finished > 0) {
    eta =
        Fixed(elapsed * static_cast<double>(total - finished) / static_cast<double>(finished), 0) +
        " s";
  }
  const std::string of = total >= 0 ? " of " + std::to_string(total) : "";
  return Printf("t = %.1f s simulated | %lld%s requests finished | %.3g events/s | ETA %s",
                ToSeconds(now), static_cast<long long>(finished), of.c_str(),
                elapsed > 0 ? static_cast<double>(events) / elapsed : 0.0, eta.c_str());
}

void Progress::Update(SimTime now, int64_t finished, int64_t total, int64_t events) {
  if (!enabled_) return;
  now_ = now;
  finished_ = finished;
  total_ = total;
  events_ = events;
  const auto wall = std::chrono::steady_clock::now();
  // A periodic line comes at the first update, then once per interval.
  if ((drawn_ || style_ == Style::kRedrawnLine) && wall - last_ < interval_) return;
  last_ = wall;
  const double elapsed = std::chrono::duration<double>(wall - start_).count();
  const std::string text = Text(now, finished, total, events, elapsed);
  if (style_ == Style::kRedrawnLine) {
    std::fprintf(out_, "\r  %s   ", text.c_str());
  } else {
    std::fprintf(out_, "fleetsim: progress: %s\n", text.c_str());
  }
  std::fflush(out_);
  drawn_ = true;
}

void Progress::Done() {
  if (!enabled_) return;
  if (style_ == Style::kRedrawnLine) {
    if (drawn_) std::fprintf(out_, "\r%100s\r", "");
  } else {
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    // Also on an error or an interrupt (Done is called on every way out): "last", not "done".
    std::fprintf(out_, "fleetsim: progress: last: %s\n",
                 Text(now_, finished_, total_, events_, elapsed).c_str());
  }
  std::fflush(out_);
  drawn_ = false;
  enabled_ = false;  // Done is called on every way out; say it once
}

}  // namespace fleetsim
