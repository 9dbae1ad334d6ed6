// `fleetsim run --dry-run`: what a run would simulate, without simulating -- the
// placement, each group's bundle and where it comes from, KV blocks and maximum
// concurrency per instance, the attention backend, the routing and the windows of the
// fleet loop, and the workload's size and rate where they are known before reading it.
//
//   PrintDryRun(job, stdout);   // builds the engines (and any analytic bundle), reads
//                               // a generator spec, never a trace's lines
#pragma once

#include <cstdio>

#include "app/run_job.h"

namespace fleetsim {

// Throws InputError for bad inputs, as the run itself would.
void PrintDryRun(const RunJob& job, std::FILE* out);

}  // namespace fleetsim
