// The report's charts as Vega-Lite specs (https://vega.github.io/vega-lite/), each reading
// one named dataset of the page (report_page.h lists their fields). A spec is JSON text;
// the page hands each its dataset before vega-embed draws it, and web/render_images.mjs
// does the same to write the chart as SVG.
#pragma once

#include <string>
#include <vector>

namespace fleetsim::report {

struct Chart {
  std::string id;       // file stem of its images, and the page element's id
  std::string section;  // the page section it belongs to
  std::string title;
  std::string caption;  // one line under it: what it shows and how it was computed
  std::string dataset;  // the dataset it reads
  std::string spec;     // Vega-Lite JSON
};

// Latency CDF of one metric ("TTFT", "TPOT", "E2E"), a line per run, group and model.
Chart LatencyChart(const std::string& metric);
// A /timeseries column over simulated time, a line per run and group (the fleet included).
Chart TimeChart(const std::string& field, const std::string& title, const std::string& axis,
                bool percent);
// A per-instance value as bars by instance id, coloured by group, one row per run.
Chart InstanceChart(const std::string& field, const std::string& title, const std::string& axis,
                    bool percent);
// A per-group result (SLO attainment, goodput) as bars, one per run.
Chart GroupChart(const std::string& field, const std::string& title, const std::string& axis,
                 bool percent);
// A sweep's points ranked by objective.
Chart SweepRankingChart(const std::string& objective_title);
// Goodput against one swept column, a line per value of the other swept columns.
Chart SweepAxisChart(const std::string& axis, bool axis_is_text);

}  // namespace fleetsim::report
