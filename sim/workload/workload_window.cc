#include "workload/workload_window.h"

#include <algorithm>
#include <cmath>

#include "core/format.h"
#include "core/input_error.h"

namespace fleetsim {

WorkloadWindow::WorkloadWindow(std::unique_ptr<WorkloadSource> source, WindowOptions options)
    : source_(std::move(source)),
      options_(options),
      stop_(options_.num_requests, options_.duration) {
  if (!(options_.rate_scale > 0)) throw OptionError("--rate-scale", "must be positive");
  if (options_.num_requests && *options_.num_requests < 0)
    throw OptionError("--num-reqs", "must not be negative");
  if (options_.duration && *options_.duration <= 0)
    throw OptionError("--duration", "must be positive");
  if (!options_.default_model.empty()) {
    if (auto problem = ModelNameViolation(options_.default_model))
      throw OptionError("--model", *problem);
  }
}

void WorkloadWindow::ApplyModelRules(WorkloadRequest& r) const {
  if (r.model.empty()) r.model = options_.default_model;
  if (!options_.known_models || r.model.empty()) return;
  const std::vector<std::string>& known = *options_.known_models;
  if (std::find(known.begin(), known.end(), r.model) != known.end()) return;
  std::string list;
  for (const std::string& name : known)
    list += (list.empty() ? "" : ", ") + name;
  throw InputError(source_->path(), r.line, "model",
                   "no instance group serves " + QuoteInput(r.model) +
                       " (--strict-models; served: " + (list.empty() ? "none" : list) + ")");
}

std::optional<int64_t> WorkloadWindow::expected_requests() const {
  const std::optional<int64_t> inner = source_->expected_requests();
  if (!options_.num_requests) return inner;
  return inner ? std::min(*inner, *options_.num_requests) : options_.num_requests;
}

std::optional<WorkloadRequest> WorkloadWindow::Next() {
  if (stop_.Ended()) return std::nullopt;
  std::optional<WorkloadRequest> r;
  while (true) {
    try {
      r = source_->Next();
      if (r) ApplyModelRules(*r);
      break;
    } catch (const InputError&) {
      if (!options_.skip_bad_lines) throw;
      ++skipped_;  // the reader has moved past the bad line
    }
  }
  if (!r) return std::nullopt;
  const std::optional<SimTime> arrival = Admit(r->arrival);
  if (!arrival) return std::nullopt;
  r->arrival = *arrival;
  return r;
}

std::optional<SimTime> WorkloadWindow::PassOver() {
  if (stop_.Ended()) return std::nullopt;
  const std::optional<SimTime> arrival = source_->PassOver();
  return arrival ? Admit(*arrival) : std::nullopt;
}

std::optional<SimTime> WorkloadWindow::Admit(SimTime arrival) {
  if (options_.rate_scale != 1.0) {
    const double scaled = static_cast<double>(arrival) / options_.rate_scale;
    if (scaled > static_cast<double>(kMaxSimTime)) {
      throw OptionError("--rate-scale", "puts an arrival at " + ShortestNumber(scaled / 1e9) +
                                            " s, past 1e9 s (the largest simulated time)");
    }
    arrival = static_cast<SimTime>(std::llround(scaled));
  }
  if (!stop_.Admit(arrival)) return std::nullopt;
  return arrival;
}

}  // namespace fleetsim
