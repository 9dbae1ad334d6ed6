#include "workload/generator_arrivals.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>

#include "workload/generator_fields.h"

namespace fleetsim::workload_gen {

namespace {

// Bounds a thinning's rejections: at most peak_to_trough candidates per kept arrival at
// the trough.
constexpr double kMaxPeakToTrough = 1000;

ArrivalSpec::Diurnal ParseDiurnal(const YamlSection& s) {
  s.RejectUnknownKeys({"period_s", "peak_to_trough", "peak_at_s"});
  ArrivalSpec::Diurnal d;
  d.period_s = GetNumber(s, "period_s", kPositive, 86400.0);
  if (d.period_s > kMaxSimSeconds)
    s.Fail("period_s", "must be at most 1e9 (the largest simulated time)");
  d.peak_to_trough = GetNumber(s, "peak_to_trough", kPositive);
  if (d.peak_to_trough < 1 || d.peak_to_trough > kMaxPeakToTrough)
    s.Fail("peak_to_trough", "must be between 1 and 1000 (the peak rate over the trough rate)");
  d.peak_at_s = GetNumber(s, "peak_at_s", kNonNegative, 0.0);
  if (d.peak_at_s >= d.period_s) s.Fail("peak_at_s", "must be less than period_s");
  return d;
}

}  // namespace

double ArrivalSpec::RateFactor(double t_s) const {
  if (!diurnal) return 1;
  const double a = (diurnal->peak_to_trough - 1) / (diurnal->peak_to_trough + 1);
  const double phase = std::fmod(t_s - diurnal->peak_at_s, diurnal->period_s) / diurnal->period_s;
  return 1 + a * std::cos(2 * std::numbers::pi * phase);
}

ArrivalSpec ArrivalSpec::Parse(const YamlSection& s) {
  ArrivalSpec spec;
  const std::string process = s.Get<std::string>("process");
  if (process == "poisson") {
    s.RejectUnknownKeys({"process", "rate_per_s", "diurnal"});
    spec.process = Process::kPoisson;
    if (s.Has("diurnal")) spec.diurnal = ParseDiurnal(s.Child("diurnal"));
  } else if (process == "gamma") {
    if (s.Has("diurnal")) s.Fail("diurnal", "a daily cycle needs process: poisson");
    s.RejectUnknownKeys({"process", "rate_per_s", "cv"});
    spec.process = Process::kGamma;
    spec.cv = GetNumber(s, "cv", kPositive);
  } else if (process == "constant") {
    if (s.Has("diurnal")) s.Fail("diurnal", "a daily cycle needs process: poisson");
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
    : spec_(spec), rng_(stream_seed), constant_gap_(SecondsToSimTime(1.0 / spec.rate_per_s)) {
  peak_rate_per_s_ = spec.rate_per_s;
  if (spec.diurnal) {
    const double k = spec.diurnal->peak_to_trough;
    peak_rate_per_s_ = spec.rate_per_s * 2 * k / (k + 1);  // rate x (1 + a)
  }
}

SimTime ArrivalProcess::Next() {
  const SimTime now = next_;
  double gap_s = 0;
  switch (spec_.process) {
    case ArrivalSpec::Process::kPoisson:
      if (spec_.diurnal) {
        next_ = NextThinned();
        return now;
      }
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

// Candidates at the peak rate from the last arrival, each kept with probability
// rate(t) / peak: two draws per candidate, in a fixed order, so the stream is reproducible.
SimTime ArrivalProcess::NextThinned() {
  SimTime t = next_;
  while (t < 2 * kMaxSimTime) {
    const double gap_s = std::min(rng_.Exponential() / peak_rate_per_s_, kMaxSimSeconds);
    t = std::min(t + SecondsToSimTime(gap_s), 2 * kMaxSimTime);
    const double keep = spec_.RateFactor(ToSeconds(t)) * spec_.rate_per_s / peak_rate_per_s_;
    if (rng_.Uniform() < keep) return t;
  }
  return t;
}

}  // namespace fleetsim::workload_gen
