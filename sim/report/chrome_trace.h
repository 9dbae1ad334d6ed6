// A run as a Chrome / Perfetto trace (the Trace Event Format's JSON object form, which
// ui.perfetto.dev and chrome://tracing load): one process per instance group, one thread
// per instance whose engine steps are complete ("X") slices named by their batch
// ("prefill 2 (1,024 tok) + decode 57") with the batch's composition as args (from
// /steps: a run with --trace-steps); and each request as a nestable async span ("b"/"e")
// from its arrival at the gateway to its finish at the client, with a nested span up to
// its first token. Times are microseconds, as the format wants, from the run's integer
// nanoseconds. Written as it is read: /steps and /requests stream through in blocks.
//
//   std::ofstream out("run.trace.json");
//   TraceCounts counts = WriteChromeTrace("run.h5", out);
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

namespace fleetsim::report {

struct TraceCounts {
  int64_t steps = 0;     // X slices
  int64_t requests = 0;  // async spans
  bool has_steps = false;
};

// Throws InputError when `run_path` is not a run file.
TraceCounts WriteChromeTrace(const std::string& run_path, std::ostream& out);

}  // namespace fleetsim::report
