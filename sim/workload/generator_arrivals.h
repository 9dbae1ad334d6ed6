// When generated requests (or, with sessions, new sessions) arrive: a renewal process
// read from the `arrivals` mapping of a generator spec.
//
//   {process: poisson, rate_per_s: 5.0}           # exponential gaps, mean 1/rate
//   {process: gamma, rate_per_s: 5.0, cv: 2.0}    # gamma gaps, mean 1/rate, CV cv (bursty > 1)
//   {process: constant, rate_per_s: 5.0}          # exactly round(1e9/rate) ns apart
//   {process: poisson, rate_per_s: 5.0,           # a day's cycle around the mean rate:
//    diurnal: {period_s: 86400, peak_to_trough: 3, peak_at_s: 50400}}
//
//   ArrivalProcess arrivals(ArrivalSpec::Parse(spec.Child("arrivals")), stream_seed);
//   SimTime t0 = arrivals.Next();  // always 0: a trace starts with its first request
//   SimTime t1 = arrivals.Next();
//
// Gaps are rounded to whole nanoseconds and summed as integers, so times never drift with
// floating-point accumulation and are the same at any position in the stream.
//
// `diurnal` (poisson only) makes the rate a cosine around `rate_per_s`:
//   rate(t) = rate_per_s x (1 + a cos(2 pi (t - peak_at_s) / period_s)),
//   a = (peak_to_trough - 1) / (peak_to_trough + 1),
// so the mean over a period is rate_per_s and the peak is peak_to_trough x the trough. The
// arrivals are a non-homogeneous Poisson process, drawn by thinning (Lewis and Shedler,
// 1979): candidates at the peak rate, each kept with probability rate(t) / peak rate.
#pragma once

#include <cstdint>
#include <optional>

#include "core/random.h"
#include "core/sim_time.h"
#include "core/yaml_section.h"

namespace fleetsim::workload_gen {

struct ArrivalSpec {
  enum class Process { kPoisson, kGamma, kConstant };
  Process process = Process::kPoisson;
  double rate_per_s = 1;
  double cv = 1;  // gamma only
  // The daily cycle (poisson only); peak_to_trough 1 is a flat rate.
  struct Diurnal {
    double period_s = 86400;
    double peak_to_trough = 1;
    double peak_at_s = 0;
  };
  std::optional<Diurnal> diurnal;
  // rate(t) / rate_per_s: 1 without a cycle.
  double RateFactor(double t_s) const;

  static ArrivalSpec Parse(const YamlSection& section);
};

class ArrivalProcess {
 public:
  ArrivalProcess(const ArrivalSpec& spec, uint64_t stream_seed);
  // The next arrival time; nondecreasing, the first is 0.
  SimTime Next();

 private:
  SimTime NextThinned();

  ArrivalSpec spec_;
  Rng rng_;
  SimTime constant_gap_ = 0;
  double peak_rate_per_s_ = 0;  // the thinning's candidate rate
  SimTime next_ = 0;
};

}  // namespace fleetsim::workload_gen
