// What `fleetsim run` prints when it is done: the summary table (one row per instance
// group, then the fleet) for people, or with --json one JSON object for programs.
//
//   PrintSummaryTable(stats.summary, stdout);
//   WriteRunJson(std::cout, facts, stats);
#pragma once

#include <cstdio>
#include <ostream>
#include <string>
#include <vector>

#include "fleet/fleet_run.h"
#include "output/run_tables.h"

namespace fleetsim {

// Every request is in one of finished, rejected or unfinished; a figure no request
// defines (an idle group's percentiles) prints as "-", never "nan".
void PrintSummaryTable(const std::vector<output::SummaryRow>& rows, std::FILE* out);

struct RunFacts {
  std::string output;  // the HDF5 file written
  std::size_t instances = 0;
  int ranks = 1;
  int threads = 1;
  double wall_s = 0;
};

// {"output": ..., "requests": ..., ..., "groups": [{"group": ..., "ttft_p50_s": ...}, ...],
//  "fleet": {...}}: /summary's columns by name (NaN as null), and the run's counters.
void WriteRunJson(std::ostream& out, const RunFacts& facts, const FleetRunStats& stats);

}  // namespace fleetsim
