#include "fleet/progress.h"

#include <unistd.h>

#include "core/format.h"

namespace fleetsim {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

Progress::Style StyleOf(ProgressMode mode, bool terminal) {
  if (mode == ProgressMode::kOff) return Progress::Style::kOff;
  return terminal ? Progress::Style::kRedrawnLine : Progress::Style::kPeriodicLines;
}

}  // namespace

Progress::Progress(ProgressMode mode)
    : Progress(StyleOf(mode, isatty(STDERR_FILENO) != 0), stderr,
               isatty(STDERR_FILENO) != 0      ? milliseconds(250)
               : mode == ProgressMode::kAlways ? milliseconds(seconds(10))
                                               : milliseconds(seconds(60)),
               mode == ProgressMode::kAlways) {}

Progress::Progress(Style style, std::FILE* out, std::chrono::milliseconds line_interval,
                   bool first_and_last)
    : style_(style),
      out_(out),
      interval_(line_interval),
      first_and_last_(first_and_last),
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
  if (style_ == Style::kOff) return;
  now_ = now;
  finished_ = finished;
  total_ = total;
  events_ = events;
  const auto wall = std::chrono::steady_clock::now();
  // A periodic line with first_and_last comes at the first update; every line after
  // one interval.
  const bool first = style_ == Style::kPeriodicLines && first_and_last_ && !drawn_;
  if (!first && wall - last_ < interval_) return;
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
  if (style_ == Style::kRedrawnLine && drawn_) {
    std::fprintf(out_, "\r%100s\r", "");
  } else if (style_ == Style::kPeriodicLines && first_and_last_) {
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    // Also on an error or an interrupt (Done is called on every way out): "last", not "done".
    std::fprintf(out_, "fleetsim: progress: last: %s\n",
                 Text(now_, finished_, total_, events_, elapsed).c_str());
  }
  std::fflush(out_);
  drawn_ = false;
  style_ = Style::kOff;  // Done is called on every way out; say it once
}

}  // namespace fleetsim
