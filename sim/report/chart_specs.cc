#include "report/chart_specs.h"

#include <sstream>

#include "core/json_writer.h"

namespace fleetsim::report {
namespace {

// Every chart's common frame: the schema, a fixed size (the SVG files need one; the page
// is the same size), the dataset, and a config that keeps text readable.
std::string Frame(const std::string& dataset, const std::string& body, int height = 260) {
  return R"({"$schema":"https://vega.github.io/schema/vega-lite/v6.json","width":640,"height":)" +
         std::to_string(height) + R"(,"data":{"name":")" + dataset + R"("},)" + body +
         R"(,"config":{"font":"DejaVu Sans","legend":{"labelLimit":320}}})";
}

// A JSON string literal.
std::string Quoted(const std::string& text) {
  std::ostringstream out;
  {
    JsonWriter json(out, JsonWriter::Layout::kCompact);
    json.Value(text);
  }
  return out.str();
}

std::string Axis(const std::string& title, bool percent) {
  return R"("title":)" + Quoted(title) + (percent ? R"(,"axis":{"format":"%"})" : "");
}

// A quantitative y encoding of `field`.
std::string Y(const std::string& field, const std::string& title, bool percent) {
  return R"("y":{"field":)" + Quoted(field) + R"(,"type":"quantitative",)" + Axis(title, percent) +
         "}";
}

// A tooltip of `fields` (the last one a number shown to 4 significant digits).
std::string Tooltip(const std::vector<std::string>& fields) {
  std::string out = R"("tooltip":[)";
  for (std::size_t i = 0; i < fields.size(); ++i) {
    out += (i ? "," : "") + std::string(R"({"field":)") + Quoted(fields[i]) +
           (i + 1 == fields.size() ? R"(,"format":".4g"})" : "}");
  }
  return out + "]";
}

}  // namespace

Chart LatencyChart(const std::string& metric) {
  const std::string what = metric == "TTFT"   ? "time to first token"
                           : metric == "TPOT" ? "time per output token"
                                              : "end-to-end latency";
  Chart chart;
  chart.id = "latency-" + std::string(metric == "TTFT"   ? "ttft"
                                      : metric == "TPOT" ? "tpot"
                                                         : "e2e");
  chart.section = "Latency";
  chart.title = metric + " distribution";
  chart.caption = "Cumulative fraction of finished requests by " + what +
                  " (log scale), per instance group and its model and for the whole fleet; "
                  "from a quantile sketch within 0.5 %.";
  chart.dataset = "latency";
  chart.spec = Frame(
      "latency",
      R"("transform":[{"filter":{"field":"metric","equal":)" + Quoted(metric) +
          R"(}},{"filter":"datum.seconds > 0"}],)"
          R"("mark":{"type":"line","interpolate":"step-after"},)"
          R"("encoding":{"x":{"field":"seconds","type":"quantitative","scale":{"type":"log"},)"
          R"("title":)" +
          Quoted(metric + " (s, log scale)") + "}," +
          R"("y":{"field":"fraction","type":"quantitative","scale":{"domain":[0,1]},)"
          R"("title":"fraction of requests"},)"
          R"("color":{"field":"series","type":"nominal","title":"group and model"},)"
          R"("strokeDash":{"field":"run","type":"nominal","title":"run"},)" +
          Tooltip({"run", "series", "fraction", "seconds"}) + "}");
  return chart;
}

Chart TimeChart(const std::string& field, const std::string& title, const std::string& axis,
                bool percent) {
  Chart chart;
  chart.id = "time-" + field;
  chart.section = "Over time";
  chart.title = title;
  chart.caption = title +
                  " per instance group and for the fleet, from /timeseries (the state "
                  "at each interval's start; rates over the interval).";
  chart.dataset = "timeseries";
  chart.spec = Frame(
      "timeseries",
      R"("mark":{"type":"line"},)"
      R"("encoding":{"x":{"field":"time_s","type":"quantitative","title":"simulated time, s"},)" +
          Y(field, axis, percent) + "," +
          R"("color":{"field":"group","type":"nominal","title":"group"},)"
          R"("strokeDash":{"field":"run","type":"nominal","title":"run"},)" +
          Tooltip({"run", "group", "time_s", field}) + "}");
  return chart;
}

Chart InstanceChart(const std::string& field, const std::string& title, const std::string& axis,
                    bool percent) {
  Chart chart;
  chart.id = "instances-" + field;
  chart.section = "Load across instances";
  chart.title = title;
  chart.caption = title + " of each instance (by id), coloured by group, from /instances.";
  chart.dataset = "instances";
  chart.spec =
      Frame("instances",
            R"("mark":{"type":"bar"},)"
            R"("encoding":{"x":{"field":"instance","type":"ordinal","title":"instance id",)"
            R"("axis":{"labels":false,"ticks":false}},)" +
                Y(field, axis, percent) + "," +
                R"("color":{"field":"group","type":"nominal","title":"group"},)"
                R"("row":{"field":"run","type":"nominal","title":null},)" +
                Tooltip({"run", "instance", "group", field}) + "}",
            180);
  return chart;
}

Chart GroupChart(const std::string& field, const std::string& title, const std::string& axis,
                 bool percent) {
  Chart chart;
  chart.id = "groups-" + field;
  chart.section = "SLOs and goodput";
  chart.title = title;
  chart.caption = title +
                  " per instance group and for the fleet, from /summary (goodput: "
                  "finished within both SLOs of the cluster config).";
  chart.dataset = "groups";
  chart.spec = Frame(
      "groups", R"("mark":{"type":"bar"},)"
                R"("encoding":{"x":{"field":"group","type":"nominal","title":"group","sort":null},)"
                R"("xOffset":{"field":"run","type":"nominal"},)" +
                    Y(field, axis, percent) + "," +
                    R"("color":{"field":"run","type":"nominal","title":"run"},)" +
                    Tooltip({"run", "group", field}) + "}");
  return chart;
}

Chart SweepRankingChart(const std::string& objective_title) {
  Chart chart;
  chart.id = "sweep-ranking";
  chart.section = "Sweep";
  chart.title = "Layouts ranked";
  chart.caption = "Each point of the sweep by its objective (" + objective_title +
                  "), best first, from sweep.h5.";
  chart.dataset = "sweep";
  chart.spec = Frame(
      "sweep",
      R"("mark":{"type":"bar"},)"
      R"("encoding":{"y":{"field":"layout","type":"nominal","title":null,"axis":{"labelLimit":480},)"
      R"("sort":{"field":"rank","op":"min","order":"ascending"}},)"
      R"("x":{"field":"objective","type":"quantitative","title":)" +
          Quoted(objective_title) + "}," +
          R"("color":{"field":"run","type":"nominal","title":"sweep"},)"
          R"("yOffset":{"field":"run","type":"nominal"},)" +
          Tooltip({"run", "layout", "rank", "goodput_rps", "objective"}) + "}",
      320);
  return chart;
}

Chart SweepAxisChart(const std::string& axis, bool axis_is_text) {
  Chart chart;
  chart.id = "sweep-axis-" + axis;
  chart.section = "Sweep";
  chart.title = "Goodput against " + axis;
  chart.caption = "Goodput (requests/s within both SLOs) of each point against its " + axis +
                  ", a line per value of the other swept columns.";
  chart.dataset = "sweep";
  chart.spec = Frame(
      "sweep", R"("mark":{"type":"line","point":true},)"
               R"("encoding":{"x":{"field":)" +
                   Quoted("axis_" + axis) + R"(,"type":)" +
                   (axis_is_text ? R"("nominal")" : R"("ordinal")") + R"(,"title":)" +
                   Quoted(axis) + "}," + R"("y":{"field":"goodput_rps","type":"quantitative",)" +
                   R"("title":"goodput, requests/s"},)"
                   R"("color":{"field":)" +
                   Quoted("others_" + axis) + R"(,"type":"nominal","title":"other axes"},)" +
                   R"("strokeDash":{"field":"run","type":"nominal","title":"sweep"},)" +
                   Tooltip({"run", "layout", "goodput_rps"}) + "}");
  return chart;
}

}  // namespace fleetsim::report
