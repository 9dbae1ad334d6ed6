// When generated requests (or, with sessions, new sessions) arrive: a renewal process
// read from the `arrivals` mapping of a generator spec.
//
//   {process: poisson, rate_per_s: 5.0}           # exponential gaps, mean 1/rate
//   {process: gamma, rate_per_s: 5.0, cv: 2.0}    # gamma gaps, mean 1/rate, CV cv (bursty > 1)
//   {process: constant, rate_per_s: 5.0}          # exactly round(1e9/rate) ns apart
//
//   ArrivalProcess arrivals(ArrivalSpec::Parse(spec.Child("arrivals")), stream_seed);
//   SimTime t0 = arrivals.Next();  // always 0: a trace starts with its first request
//   SimTime t1 = arrivals.Next();
//
// Gaps are rounded to whole nanoseconds and summed as integers, so times never drift with
// floating-point accumulation and are the same at any position in the stream.
#pragma once

#include <cstdint>

#include "core/random.h"
#include "core/sim_time.h"
#include "core/yaml_section.h"

namespace fleetsim::workload_gen {

struct ArrivalSpec {
  enum class Process { kPoisson, kGamma, kConstant };
  Process process = Process::kPoisson;
  double rate_per_s = 1;
  double cv = 1;  // gamma only

  static ArrivalSpec Parse(const YamlSection& section);
};

class ArrivalProcess {
 public:
  ArrivalProcess(const ArrivalSpec& spec, uint64_t stream_seed);
  // The next arrival time; nondecreasing, the first is 0.
  SimTime Next();

 private:
  ArrivalSpec spec_;
  Rng rng_;
  SimTime constant_gap_ = 0;
  SimTime next_ = 0;
};

}  // namespace fleetsim::workload_gen
