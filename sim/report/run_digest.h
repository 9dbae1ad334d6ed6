// What the report shows of one run's HDF5 file, summarised so that the page stays small
// whatever the run's size: latency distributions as quantile curves per instance group
// (with its model) and for the fleet, /summary, /instances, and /timeseries thinned to at
// most kMaxTimePoints per group. /requests is read in blocks into mergeable sketches,
// never whole, so a run of millions of requests is summarised in bounded memory.
//
//   RunDigest run = DigestRun("runs/out/quickstart.h5", "quickstart");
//   for (const LatencyCurve& curve : run.latency) ...   // TTFT, TPOT, E2E per group
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "output/run_tables.h"

namespace fleetsim::report {

// The cumulative fractions at which a latency curve is sampled: 0, 0.01, ..., 0.99, then
// 0.995, 0.999 and 1.
const std::vector<double>& CurveFractions();

inline constexpr std::size_t kMaxTimePoints = 1500;

struct LatencyCurve {
  std::string group;   // an instance group, or "fleet"
  std::string model;   // its model ("fleet": the models, comma-separated)
  std::string metric;  // "TTFT", "TPOT", "E2E"
  int64_t count = 0;   // requests with the metric defined (finished; TPOT: > 1 output token)
  std::vector<double> seconds;  // at CurveFractions(), from a sketch within 0.5 %
};

struct RunDigest {
  std::string label;  // how the page names the run
  std::string path;
  std::map<std::string, std::string> provenance;  // the attributes the page shows
  std::vector<output::SummaryRow> summary;
  std::vector<output::InstanceRow> instances;
  std::vector<output::TimeseriesRow> timeseries;
  std::vector<LatencyCurve> latency;  // empty when the run has no /requests
  bool has_requests = false;
  double fleet_duration_s = 0;  // /summary's fleet row: first arrival to last finish
  // The model of each group, from /instances.
  std::map<std::string, std::string> model_of_group;
};

// Reads a run file. A file without /summary is an InputError naming it.
RunDigest DigestRun(const std::string& path, const std::string& label);

// Averages consecutive rows of each group's series so that none has more than
// `max_points` rows; rows stay grouped as they came (group by group, in time order).
std::vector<output::TimeseriesRow> ThinTimeseries(const std::vector<output::TimeseriesRow>& rows,
                                                  std::size_t max_points);

}  // namespace fleetsim::report
