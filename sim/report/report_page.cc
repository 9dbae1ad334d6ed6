#include "report/report_page.h"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "core/format.h"
#include "core/input_error.h"
#include "core/json_writer.h"
#include "core/text_file.h"
#include "output/table_reader.h"
#include "report/chart_images.h"
#include "report/chart_specs.h"
#include "report/run_digest.h"
#include "report/sweep_digest.h"
#include "report/web_assets.h"

namespace fleetsim::report {
namespace {

namespace fs = std::filesystem;
using Json = JsonWriter;
constexpr int kDigits = 6;  // significant digits of the page's numbers

std::string Text(const char* field, std::size_t size) {
  return std::string(field, strnlen(field, size));
}

std::string Html(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// A library's text inside <script>: "</script" would close the element early; "<\/"
// means the same in JavaScript strings and regular expressions.
// (Only that sequence is touched: "</" elsewhere, in an HTML template string, is left be.)
std::string ScriptSafe(std::string text) {
  for (std::size_t at = text.find("</script"); at != std::string::npos;
       at = text.find("</script", at + 3))
    text.replace(at, 2, "<\\/");
  return text;
}

// JSON inside <script>: every '<' (which JSON has only inside strings) as \u003c, so that
// neither "</script" nor "<!--" can appear.
std::string JsonSafe(const std::string& json) {
  std::string out;
  for (char c : json)
    out += c == '<' ? std::string("\\u003c") : std::string(1, c);
  return out;
}

std::string Cell(double value, int decimals) {
  return std::isfinite(value) ? Fixed(value, decimals) : "&ndash;";
}

std::string Percent(double value) {
  return std::isfinite(value) ? Fixed(100 * value, 1) + " %" : "&ndash;";
}

// The model of a /summary row's group ("fleet": every model).
std::string ModelOf(const RunDigest& run, const std::string& group) {
  if (auto it = run.model_of_group.find(group); it != run.model_of_group.end()) return it->second;
  std::set<std::string> models;
  for (const auto& [g, model] : run.model_of_group)
    models.insert(model);
  std::string all;
  for (const std::string& model : models)
    all += (all.empty() ? "" : ", ") + model;
  return all;
}

void LatencyRows(const std::vector<RunDigest>& runs, Json& json) {
  json.BeginArray();
  for (const RunDigest& run : runs) {
    for (const LatencyCurve& curve : run.latency) {
      const std::string series = curve.group + " (" + curve.model + ")";
      for (std::size_t i = 0; i < curve.seconds.size(); ++i) {
        json.BeginObject();
        json.Field("run", run.label);
        json.Field("series", series);
        json.Field("metric", curve.metric);
        json.Key("seconds");
        json.Value(curve.seconds[i], kDigits);
        json.Key("fraction");
        json.Value(CurveFractions()[i], kDigits);
        json.EndObject();
      }
    }
  }
  json.EndArray();
}

void TimeseriesRows(const std::vector<RunDigest>& runs, Json& json) {
  json.BeginArray();
  for (const RunDigest& run : runs) {
    for (const output::TimeseriesRow& row : run.timeseries) {
      json.BeginObject();
      json.Field("run", run.label);
      json.Field("group", Text(row.group, sizeof row.group));
      json.Key("time_s");
      json.Value(row.time_s, kDigits + 3);
      json.Field("running", row.running);
      json.Field("waiting", row.waiting);
      json.Key("kv_usage");
      json.Value(row.kv_usage, kDigits);
      json.Key("prompt_tokens_per_s");
      json.Value(row.prompt_tokens_per_s, kDigits);
      json.Key("generation_tokens_per_s");
      json.Value(row.generation_tokens_per_s, kDigits);
      json.EndObject();
    }
  }
  json.EndArray();
}

void InstanceRows(const std::vector<RunDigest>& runs, Json& json) {
  json.BeginArray();
  for (const RunDigest& run : runs) {
    for (const output::InstanceRow& row : run.instances) {
      json.BeginObject();
      json.Field("run", run.label);
      json.Field("instance", row.id);
      json.Field("group", Text(row.group, sizeof row.group));
      json.Field("requests", row.requests);
      json.Key("busy_fraction");
      json.Value(run.fleet_duration_s > 0
                     ? static_cast<double>(row.busy_ns) / 1e9 / run.fleet_duration_s
                     : 0.0,
                 kDigits);
      json.Field("preemptions", row.preemptions);
      json.Key("prefix_hit_fraction");
      json.Value(row.prompt_tokens > 0 ? static_cast<double>(row.prefix_hit_tokens) /
                                             static_cast<double>(row.prompt_tokens)
                                       : 0.0,
                 kDigits);
      json.EndObject();
    }
  }
  json.EndArray();
}

void GroupRows(const std::vector<RunDigest>& runs, Json& json) {
  json.BeginArray();
  for (const RunDigest& run : runs) {
    for (const output::SummaryRow& row : run.summary) {
      json.BeginObject();
      json.Field("run", run.label);
      json.Field("group", Text(row.group, sizeof row.group));
      json.Field("requests", row.requests);
      json.Field("finished", row.finished);
      json.Field("unfinished", row.unfinished);
      json.Key("throughput_rps");
      json.Value(row.throughput_rps, kDigits);
      json.Key("goodput_rps");
      json.Value(row.goodput_rps, kDigits);
      json.Key("slo_attainment");
      json.Value(row.slo_attainment, kDigits);
      json.EndObject();
    }
  }
  json.EndArray();
}

void SweepRows(const std::vector<SweepDigest>& sweeps, Json& json) {
  json.BeginArray();
  for (const SweepDigest& sweep : sweeps) {
    for (std::size_t r = 0; r < sweep.rows; ++r) {
      json.BeginObject();
      json.Field("run", sweep.label);
      json.Field("layout", sweep.layout[r]);
      for (const char* name : {"point", "rank", "objective", "goodput_rps", "slo_attainment"}) {
        if (const output::FrameColumn* column = sweep.Column(name); column && !column->text) {
          json.Key(name);
          json.Value(column->numbers[r], kDigits);
        }
      }
      for (const std::string& axis : sweep.axes) {
        const output::FrameColumn& column = *sweep.Column(axis);
        json.Key("axis_" + axis);
        if (column.text) {
          json.Value(column.texts[r]);
        } else {
          json.Value(column.numbers[r], kDigits);
        }
        std::string others;
        for (const std::string& other : sweep.axes) {
          if (other == axis) continue;
          const output::FrameColumn& o = *sweep.Column(other);
          others += (others.empty() ? "" : ", ") + other + " " +
                    (o.text ? o.texts[r] : Significant(o.numbers[r], kDigits));
        }
        json.Field("others_" + axis, others.empty() ? std::string("(none)") : others);
      }
      json.EndObject();
    }
  }
  json.EndArray();
}

std::string RunsTable(const std::vector<RunDigest>& runs, const std::vector<SweepDigest>& sweeps) {
  std::string html =
      "<table><tr><th>run</th><th>file</th><th>cluster config</th><th>workload</th>"
      "<th>fleetsim</th></tr>\n";
  for (const RunDigest& run : runs) {
    auto get = [&](const char* key) {
      auto it = run.provenance.find(key);
      return it == run.provenance.end() ? std::string() : it->second;
    };
    html += "<tr><td>" + Html(run.label) + "</td><td>" + Html(run.path) + "</td><td>" +
            Html(get("cluster_config_path")) + "</td><td>" + Html(get("workload_path")) +
            "</td><td>" + Html(get("fleetsim_version")) + "</td></tr>\n";
  }
  for (const SweepDigest& sweep : sweeps) {
    html += "<tr><td>" + Html(sweep.label) + "</td><td>" + Html(sweep.path) +
            "</td><td colspan=\"3\">sweep " + Html(sweep.name) + ", " + std::to_string(sweep.rows) +
            " points, objective " + Html(sweep.objective) + "</td></tr>\n";
  }
  return html + "</table>\n";
}

std::string SummaryTable(const std::vector<RunDigest>& runs) {
  std::string html =
      "<table class=\"numbers\"><tr><th>run</th><th>group</th><th>model</th><th>requests</th>"
      "<th>finished</th><th>rejected</th><th>unfinished</th><th>req/s</th><th>goodput "
      "req/s</th><th>SLO</th><th>TTFT p50 / p90 / p99 (s)</th><th>TPOT p50 / p90 / p99 "
      "(ms)</th><th>E2E p50 / p90 / p99 (s)</th></tr>\n";
  for (const RunDigest& run : runs) {
    for (const output::SummaryRow& r : run.summary) {
      const std::string group = Text(r.group, sizeof r.group);
      auto triple = [](double a, double b, double c, double scale, int decimals) {
        return Cell(a * scale, decimals) + " / " + Cell(b * scale, decimals) + " / " +
               Cell(c * scale, decimals);
      };
      html += "<tr><td>" + Html(run.label) + "</td><td>" + Html(group) + "</td><td>" +
              Html(ModelOf(run, group)) + "</td><td>" + std::to_string(r.requests) + "</td><td>" +
              std::to_string(r.finished) + "</td><td>" + std::to_string(r.rejected) + "</td><td>" +
              std::to_string(r.unfinished) + "</td><td>" + Cell(r.throughput_rps, 2) + "</td><td>" +
              Cell(r.goodput_rps, 2) + "</td><td>" + Percent(r.slo_attainment) + "</td><td>" +
              triple(r.ttft_p50_s, r.ttft_p90_s, r.ttft_p99_s, 1, 3) + "</td><td>" +
              triple(r.tpot_p50_s, r.tpot_p90_s, r.tpot_p99_s, 1e3, 1) + "</td><td>" +
              triple(r.e2e_p50_s, r.e2e_p90_s, r.e2e_p99_s, 1, 2) + "</td></tr>\n";
    }
  }
  return html + "</table>\n";
}

std::string SweepTable(const std::vector<SweepDigest>& sweeps) {
  std::string html;
  for (const SweepDigest& sweep : sweeps) {
    html += "<h3>" + Html(sweep.label) + "</h3><table class=\"numbers\"><tr>";
    for (const output::FrameColumn& column : sweep.columns)
      html += "<th>" + Html(column.name) + "</th>";
    html += "</tr>\n";
    // Rows by rank, best first.
    std::vector<std::size_t> order(sweep.rows);
    for (std::size_t i = 0; i < order.size(); ++i)
      order[i] = i;
    if (const output::FrameColumn* rank = sweep.Column("rank"); rank && !rank->text) {
      std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return rank->numbers[a] < rank->numbers[b];
      });
    }
    for (std::size_t r : order) {
      html += "<tr>";
      for (const output::FrameColumn& column : sweep.columns) {
        html += "<td>" +
                (column.text ? Html(column.texts[r])
                             : (std::isfinite(column.numbers[r]) ? Significant(column.numbers[r], 5)
                                                                 : std::string("&ndash;"))) +
                "</td>";
      }
      html += "</tr>\n";
    }
    html += "</table>\n";
  }
  return html;
}

// The charts the inputs have data for, in page order.
std::vector<Chart> ChartsFor(const std::vector<RunDigest>& runs,
                             const std::vector<SweepDigest>& sweeps) {
  std::vector<Chart> charts;
  bool latency = false, timeseries = false, instances = false;
  for (const RunDigest& run : runs) {
    latency = latency || !run.latency.empty();
    timeseries = timeseries || !run.timeseries.empty();
    instances = instances || !run.instances.empty();
  }
  if (latency) {
    for (const char* metric : {"TTFT", "TPOT", "E2E"})
      charts.push_back(LatencyChart(metric));
  }
  if (timeseries) {
    charts.push_back(TimeChart("running", "Running requests", "running (requests)", false));
    charts.push_back(TimeChart("waiting", "Waiting requests", "waiting (requests)", false));
    charts.push_back(TimeChart("kv_usage", "KV-cache usage", "KV blocks in use", true));
    charts.push_back(
        TimeChart("generation_tokens_per_s", "Output throughput", "generated tokens/s", false));
    charts.push_back(
        TimeChart("prompt_tokens_per_s", "Prompt throughput", "prompt tokens/s", false));
  }
  if (instances) {
    charts.push_back(InstanceChart("requests", "Requests served", "requests", false));
    charts.push_back(
        InstanceChart("busy_fraction", "Busy fraction", "time stepping / run duration", true));
    charts.push_back(InstanceChart("preemptions", "Preemptions", "preemptions", false));
    charts.push_back(InstanceChart("prefix_hit_fraction", "Prefix-cache hits",
                                   "prompt tokens from the cache", true));
  }
  if (!runs.empty()) {
    charts.push_back(
        GroupChart("slo_attainment", "SLO attainment", "requests within both SLOs", true));
    charts.push_back(GroupChart("goodput_rps", "Goodput", "requests/s within both SLOs", false));
  }
  if (!sweeps.empty()) {
    const std::string objective = sweeps.front().objective;
    charts.push_back(SweepRankingChart(
        objective == "goodput_per_gpu"      ? "goodput per GPU (requests/s per GPU)"
        : objective == "goodput_per_dollar" ? "goodput per dollar (requests per USD)"
        : objective == "max_rate"           ? "highest rate scale meeting the SLO target"
                                            : "objective " + objective));
    std::set<std::string> seen;
    for (const SweepDigest& sweep : sweeps) {
      for (const std::string& axis : sweep.axes) {
        if (seen.insert(axis).second)
          charts.push_back(SweepAxisChart(axis, sweep.Column(axis)->text));
      }
    }
  }
  return charts;
}

std::string PageData(const std::vector<RunDigest>& runs, const std::vector<SweepDigest>& sweeps,
                     const std::vector<Chart>& charts) {
  std::ostringstream out;
  out << "{\"datasets\":";
  {
    Json json(out, Json::Layout::kCompact);
    json.BeginObject();
    json.Key("latency");
    LatencyRows(runs, json);
    json.Key("timeseries");
    TimeseriesRows(runs, json);
    json.Key("instances");
    InstanceRows(runs, json);
    json.Key("groups");
    GroupRows(runs, json);
    json.Key("sweep");
    SweepRows(sweeps, json);
    json.EndObject();
  }
  out << ",\"charts\":[";
  for (std::size_t i = 0; i < charts.size(); ++i) {
    out << (i ? "," : "") << "{\"id\":\"" << charts[i].id << "\",\"dataset\":\""
        << charts[i].dataset << "\",\"spec\":" << charts[i].spec << "}";
  }
  out << "]}";
  return out.str();
}

// The page's own script: every chart drawn as SVG; window.fleetsimReport says when all are
// done and which failed (the page test waits on it).
constexpr const char* kPageScript = R"(
(async () => {
  const page = JSON.parse(document.getElementById('fleetsim-report-data').textContent);
  const results = await Promise.allSettled(page.charts.map((chart) => {
    const spec = chart.spec;
    spec.datasets = {[chart.dataset]: page.datasets[chart.dataset]};
    return vegaEmbed('#chart-' + chart.id, spec, {actions: false, renderer: 'svg'});
  }));
  const failed = [];
  results.forEach((result, i) => {
    if (result.status === 'rejected') {
      failed.push(page.charts[i].id + ': ' + result.reason);
      console.error('chart ' + page.charts[i].id + ' failed: ' + result.reason);
    }
  });
  window.fleetsimReport = {charts: page.charts.map((c) => c.id), failed};
})();
)";

constexpr const char* kStyle = R"(
body { font-family: "DejaVu Sans", sans-serif; margin: 2em; color: #222; max-width: 1400px; }
h1 { margin-bottom: 0.2em; }
section { margin-top: 2em; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.5em; text-align: left; }
table.numbers td { text-align: right; font-variant-numeric: tabular-nums; }
.charts { display: flex; flex-wrap: wrap; gap: 1.5em; }
.chart { border: 1px solid #e4e4e4; padding: 0.5em 1em; }
.chart h3 { margin: 0.2em 0; font-size: 1em; }
.caption { color: #555; font-size: 0.85em; max-width: 700px; }
.note { color: #8a4b00; }
)";

std::string PageHtml(const std::vector<RunDigest>& runs, const std::vector<SweepDigest>& sweeps,
                     const std::vector<Chart>& charts, const std::string& data) {
  std::string title;
  for (const RunDigest& run : runs)
    title += (title.empty() ? "" : ", ") + run.label;
  for (const SweepDigest& sweep : sweeps)
    title += (title.empty() ? "" : ", ") + sweep.label;
  std::string html =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<title>fleetsim report: " +
      Html(title) + "</title>\n<style>" + kStyle + "</style>\n";
  for (const WebLibrary& library : WebLibraries()) {
    std::string license = ReadTextFile(library.license.string());
    for (std::size_t at = license.find("*/"); at != std::string::npos; at = license.find("*/"))
      license.replace(at, 2, "* /");
    html += "<script>/*! " + library.name + " (" + library.script.filename().string() +
            "), from npm; its license:\n" + ScriptSafe(license) + "*/\n" +
            ScriptSafe(ReadTextFile(library.script.string())) + "\n</script>\n";
  }
  html += "</head>\n<body>\n<h1>fleetsim report</h1>\n<p>" + Html(title) + "</p>\n";
  html += "<section id=\"runs\"><h2>Inputs</h2>\n" + RunsTable(runs, sweeps) + "</section>\n";
  if (!runs.empty()) {
    html +=
        "<section id=\"summary\"><h2>Summary</h2>\n<p class=\"caption\">Per instance group "
        "(with its model) and for the fleet, from /summary: percentiles from a sketch "
        "within 0.5 %; &ndash; where no request defines the figure.</p>\n" +
        SummaryTable(runs) + "</section>\n";
    for (const RunDigest& run : runs) {
      if (!run.has_requests) {
        html += "<p class=\"note\">" + Html(run.label) +
                " has no /requests (run with --no-request-rows): no latency curves for it.</p>\n";
      }
    }
  }
  if (!sweeps.empty())
    html +=
        "<section id=\"sweep-table\"><h2>Sweep points</h2>\n" + SweepTable(sweeps) + "</section>\n";
  std::string section;
  for (const Chart& chart : charts) {
    if (chart.section != section) {
      if (!section.empty()) html += "</div></section>\n";
      section = chart.section;
      html += "<section><h2>" + Html(section) + "</h2><div class=\"charts\">\n";
    }
    html += "<div class=\"chart\"><h3>" + Html(chart.title) + "</h3><div id=\"chart-" + chart.id +
            "\"></div><p class=\"caption\">" + Html(chart.caption) + "</p></div>\n";
  }
  if (!section.empty()) html += "</div></section>\n";
  html += "<script type=\"application/json\" id=\"fleetsim-report-data\">" + JsonSafe(data) +
          "</script>\n<script>" + kPageScript + "</script>\n</body>\n</html>\n";
  return html;
}

}  // namespace

std::vector<std::string> RunLabels(const std::vector<std::string>& files) {
  std::map<std::string, int> stems;
  for (const std::string& file : files)
    ++stems[fs::path(file).stem().string()];
  std::vector<std::string> labels;
  for (const std::string& file : files) {
    const fs::path path(file);
    std::string label = path.stem().string();
    if (stems[label] > 1) {
      const std::string parent = fs::absolute(path).parent_path().filename().string();
      label = parent + "/" + label;
    }
    // Still equal (the same file twice): number them.
    int same = 0;
    for (const std::string& earlier : labels)
      same += earlier == label || earlier.rfind(label + " #", 0) == 0;
    labels.push_back(same ? label + " #" + std::to_string(same + 1) : label);
  }
  return labels;
}

ReportOutput WriteReport(const ReportOptions& options) {
  const std::vector<std::string> labels = RunLabels(options.files);
  std::vector<RunDigest> runs;
  std::vector<SweepDigest> sweeps;
  for (std::size_t i = 0; i < options.files.size(); ++i) {
    const std::string& file = options.files[i];
    if (output::HasTable(file, "/summary")) {
      runs.push_back(DigestRun(file, labels[i]));
    } else if (output::HasTable(file, "/sweep")) {
      sweeps.push_back(DigestSweep(file, labels[i]));
    } else {
      throw InputError(file, 0, "",
                       "neither a fleetsim run file (/summary) nor a sweep file (/sweep)");
    }
  }
  const std::vector<Chart> charts = ChartsFor(runs, sweeps);
  const std::string data = PageData(runs, sweeps, charts);
  const std::string html = PageHtml(runs, sweeps, charts, data);

  std::error_code error;
  fs::create_directories(options.out_dir, error);
  if (error)
    throw OptionError("--out", "cannot create folder " + options.out_dir + ": " + error.message());
  ReportOutput result;
  result.page = (fs::path(options.out_dir) / "report.html").string();
  {
    std::ofstream page(result.page, std::ios::binary);
    page << html;
    if (!page.flush()) throw OptionError("--out", "cannot write " + result.page);
  }
  for (const Chart& chart : charts)
    result.charts.push_back(chart.id);
  if (options.svg || options.png) {
    const ChartImages images = WriteChartImages(data, options.out_dir, options.png);
    result.images = images.files;
    result.warnings = images.warnings;
  }
  return result;
}

}  // namespace fleetsim::report
