// `fleetsim report`: one self-contained HTML page of one or more run files and sweep
// files -- latency CDFs and percentiles per group and model, the fleet over time, load
// across instances, SLO attainment and goodput, several runs overlaid, a sweep's ranking
// and goodput against its axes -- with the charting libraries inlined, so that it opens
// offline; and each chart also as SVG and PNG beside it (web/render_images.mjs under node,
// then rsvg-convert), when those programs are there.
//
// The page's datasets (one JSON object, in the page) hold, per run:
//   latency     run, series ("group (model)"), metric, seconds, fraction
//   timeseries  run, group, time_s, running, waiting, kv_usage, prompt/generation_tokens_per_s
//   instances   run, instance, group, requests, busy_fraction, preemptions, prefix_hit_fraction
//   groups      run, group, requests, finished, unfinished, throughput_rps, goodput_rps,
//               slo_attainment
//   sweep       run, point, layout, rank, objective, goodput_rps, slo_attainment,
//               axis_<a> and others_<a> for each swept column a
//
//   ReportOptions options{{"runs/out/quickstart.h5"}, "runs/out/quickstart-report"};
//   ReportOutput out = WriteReport(options);   // out.page: .../report.html
#pragma once

#include <string>
#include <vector>

namespace fleetsim::report {

struct ReportOptions {
  std::vector<std::string> files;  // run files (/summary) and sweep files (/sweep)
  std::string out_dir;             // created when missing
  bool svg = true;                 // each chart as <id>.svg (needs node)
  bool png = true;                 // and <id>.png (needs rsvg-convert)
};

struct ReportOutput {
  std::string page;                   // <out_dir>/report.html
  std::vector<std::string> images;    // the SVG and PNG files written
  std::vector<std::string> warnings;  // images that could not be made, and why
  std::vector<std::string> charts;    // the charts' ids, in page order
};

// Throws InputError for a file that is neither a run nor a sweep, a missing charting
// library, or an output folder that cannot be written.
ReportOutput WriteReport(const ReportOptions& options);

// How the page names each file: its stem, or parent/stem where two stems are equal.
std::vector<std::string> RunLabels(const std::vector<std::string>& files);

}  // namespace fleetsim::report
