#include "workload/generator_arrivals.h"

#include <algorithm>
#include <string>

#include "workload/generator_fields.h"

namespace fleetsim::workload_gen {

ArrivalSpec ArrivalSpec::Parse(const YamlSection& s) {
  ArrivalSpec spec;
  const std::string process = s.Get<std::string>("process");
  if (process == "poisson") {
    s.RejectUnknownKeys({"process", "rate_per_s"});
    spec.process = Process::kPoisson;
  } else if (process == "gamma") {
    s.RejectUnknownKeys({"process", "rate_per_s", "cv"});
    spec.process = Process::kGamma;
    spec.cv = GetNumber(s, "cv", kPositive);
  } else if (process == "constant") {
    s.RejectUnknownKeys({"process", "rate_per_s"});
    spec.process = Process::kConstant;
  } else {
    s.Fail("process", "unknown process '" + process + "' (accepted: poisson, gamma, constant)");
  }
  spec.rate_per_s = GetNumber(s, "rate_per_s", kPositive);
  if (spec.rate_per_s < 1.0 / kMaxSimSeconds) {
    s.Fail("rate_per_s",
           "must be at least 1e-9 (one request per 1e9 s, the largest simulated time)");
  }
  if (spec.process == Process::kConstant && SecondsToSimTime(1.0 / spec.rate_per_s) < 1)
    s.Fail("rate_per_s", "a constant rate must leave at least 1 ns between requests");
  return spec;
}

ArrivalProcess::ArrivalProcess(const ArrivalSpec& spec, uint64_t stream_seed)
    : spec_(spec), rng_(stream_seed), constant_gap_(SecondsToSimTime(1.0 / spec.rate_per_s)) {}

SimTime ArrivalProcess::Next() {
  const SimTime now = next_;
  double gap_s = 0;
  switch (spec_.process) {
    case ArrivalSpec::Process::kPoisson:
      gap_s = rng_.Exponential() / spec_.rate_per_s;
      break;
    case ArrivalSpec::Process::kGamma: {
      // Shape 1/cv^2 gives coefficient of variation cv; the scale sets the mean to 1/rate.
      const double shape = 1.0 / (spec_.cv * spec_.cv);
      gap_s = rng_.Gamma(shape) / (shape * spec_.rate_per_s);
      break;
    }
    case ArrivalSpec::Process::kConstant:
      next_ = std::min(next_ + constant_gap_, 2 * kMaxSimTime);
      return now;
  }
  // A draw far in the tail, or a run of many, must not overflow the clock: arrivals
  // saturate past the largest simulated time (a run is refused before it gets there:
  // /timeseries' limit of intervals).
  next_ = std::min(next_ + SecondsToSimTime(std::min(gap_s, kMaxSimSeconds)), 2 * kMaxSimTime);
  return now;
}

}  // namespace fleetsim::workload_gen
