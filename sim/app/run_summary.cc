#include "app/run_summary.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/format.h"
#include "core/json_writer.h"

namespace fleetsim {
namespace {

// `value` as printf's %.*f, or "-" when it is not a number.
std::string Or(double value, int decimals, const char* suffix = "") {
  return std::isfinite(value) ? Fixed(value, decimals) + suffix : std::string("-");
}

void SummaryObject(JsonWriter& json, const output::SummaryRow& r) {
  json.BeginObject();
  json.Field("group", std::string(r.group, strnlen(r.group, sizeof r.group)));
  json.Field("requests", r.requests);
  json.Field("finished", r.finished);
  json.Field("rejected", r.rejected);
  json.Field("unfinished", r.unfinished);
  const std::pair<const char*, double> numbers[] = {{"duration_s", r.duration_s},
                                                    {"throughput_rps", r.throughput_rps},
                                                    {"output_tokens_per_s", r.output_tokens_per_s},
                                                    {"goodput_rps", r.goodput_rps},
                                                    {"slo_attainment", r.slo_attainment},
                                                    {"ttft_p50_s", r.ttft_p50_s},
                                                    {"ttft_p90_s", r.ttft_p90_s},
                                                    {"ttft_p99_s", r.ttft_p99_s},
                                                    {"tpot_p50_s", r.tpot_p50_s},
                                                    {"tpot_p90_s", r.tpot_p90_s},
                                                    {"tpot_p99_s", r.tpot_p99_s},
                                                    {"e2e_p50_s", r.e2e_p50_s},
                                                    {"e2e_p90_s", r.e2e_p90_s},
                                                    {"e2e_p99_s", r.e2e_p99_s}};
  for (const auto& [key, value] : numbers) {
    json.Key(key);
    json.Value(value);  // NaN: null
  }
  json.EndObject();
}

}  // namespace

void PrintSummaryTable(const std::vector<output::SummaryRow>& rows, std::FILE* out) {
  int width = 20;  // as wide as the longest group name: names are never cut
  for (const output::SummaryRow& r : rows)
    width = std::max(width, static_cast<int>(strnlen(r.group, sizeof r.group)));
  std::fprintf(out, "%-*s %8s %8s %8s %10s %9s %9s %9s %9s %9s %9s %7s\n", width, "group",
               "requests", "finished", "rejected", "unfinished", "req/s", "tok/s", "goodput",
               "TTFT p50", "TTFT p99", "TPOT p50", "SLO");
  for (const output::SummaryRow& r : rows) {
    const std::string group(r.group, strnlen(r.group, sizeof r.group));
    std::fprintf(out, "%-*s %8lld %8lld %8lld %10lld %9s %9s %9s %9s %9s %9s %7s\n", width,
                 group.c_str(), static_cast<long long>(r.requests),
                 static_cast<long long>(r.finished), static_cast<long long>(r.rejected),
                 static_cast<long long>(r.unfinished), Or(r.throughput_rps, 2).c_str(),
                 Or(r.output_tokens_per_s, 1).c_str(), Or(r.goodput_rps, 2).c_str(),
                 Or(r.ttft_p50_s, 3, "s").c_str(), Or(r.ttft_p99_s, 3, "s").c_str(),
                 Or(r.tpot_p50_s, 4, "s").c_str(), Or(100 * r.slo_attainment, 1, "%").c_str());
  }
}

void WriteRunJson(std::ostream& out, const RunFacts& facts, const FleetRunStats& stats) {
  JsonWriter json(out);
  json.BeginObject();
  json.Field("output", facts.output);
  json.Field("requests", stats.requests);
  json.Field("instances", static_cast<int64_t>(facts.instances));
  json.Field("steps", stats.steps);
  json.Field("events", stats.events);
  json.Field("windows", stats.windows);
  json.Field("out_of_grid_lookups", stats.out_of_grid);
  json.Field("ranks", facts.ranks);
  json.Field("threads", facts.threads);
  json.Field("wall_time_s", facts.wall_s);
  json.Field("meeting_time_s", stats.meeting_time_s);
  json.Key("groups");
  json.BeginArray();
  for (const output::SummaryRow& row : stats.summary) {
    if (std::strncmp(row.group, "fleet", sizeof row.group) != 0) SummaryObject(json, row);
  }
  json.EndArray();
  for (const output::SummaryRow& row : stats.summary) {
    if (std::strncmp(row.group, "fleet", sizeof row.group) == 0) {
      json.Key("fleet");
      SummaryObject(json, row);
    }
  }
  json.EndObject();
}

}  // namespace fleetsim
