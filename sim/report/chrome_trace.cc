#include "report/chrome_trace.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <vector>

#include "core/format.h"
#include "core/input_error.h"
#include "core/json_writer.h"
#include "output/run_tables.h"
#include "output/table_reader.h"

namespace fleetsim::report {
namespace {

constexpr int64_t kBlockRows = 1 << 16;
// Microseconds with the nanoseconds kept: 16 significant digits hold 1e9 s to the ns.
constexpr int kTimeDigits = 16;

std::string Text(const char* field, std::size_t size) {
  return std::string(field, strnlen(field, size));
}

void Time(JsonWriter& json, const char* key, int64_t ns) {
  json.Key(key);
  json.Value(static_cast<double>(ns) / 1e3, kTimeDigits);
}

void Metadata(JsonWriter& json, const char* what, int pid, int tid, const std::string& name) {
  json.BeginObject();
  json.Field("name", what);
  json.Field("ph", "M");
  json.Field("pid", pid);
  json.Field("tid", tid);
  json.Key("args");
  json.BeginObject();
  json.Field("name", name);
  json.EndObject();
  json.EndObject();
}

// A step's name: what its batch held.
std::string StepName(const output::StepRow& s) {
  std::string name;
  if (s.prefill_chunks > 0)
    name = "prefill " + std::to_string(s.prefill_chunks) + " (" + WithCommas(s.prefill_tokens) +
           " tok)";
  if (s.decodes > 0) name += (name.empty() ? "" : " + ") + ("decode " + std::to_string(s.decodes));
  return name.empty() ? "step" : name;
}

}  // namespace

TraceCounts WriteChromeTrace(const std::string& run_path, std::ostream& out) {
  if (!output::HasTable(run_path, "/summary") || !output::HasTable(run_path, "/instances"))
    throw InputError(run_path, 0, "", "not a fleetsim run file (no /summary and /instances)");
  const output::TableRows instance_rows =
      output::ReadTable(run_path, "/instances", output::InstanceSchema());
  // Processes are groups (pid 1, 2, ... in order of first appearance; 0 stays unused, as
  // some viewers treat it specially); requests that reached no instance go to the last.
  std::map<std::string, int> pid_of_group;
  std::vector<int> pid_of_instance;
  std::vector<std::string> group_names;
  for (int64_t i = 0; i < instance_rows.count; ++i) {
    const auto& row = instance_rows.at<output::InstanceRow>(i);
    const std::string group = Text(row.group, sizeof row.group);
    auto [it, added] = pid_of_group.emplace(group, static_cast<int>(pid_of_group.size()) + 1);
    if (added) group_names.push_back(group);
    pid_of_instance.push_back(it->second);
  }
  const int unrouted_pid = static_cast<int>(group_names.size()) + 1;

  TraceCounts counts;
  JsonWriter json(out, JsonWriter::Layout::kCompact);
  json.BeginObject();
  json.Field("displayTimeUnit", "ms");
  json.Key("otherData");
  json.BeginObject();
  json.Field("source", run_path);
  if (auto version = output::ReadStringAttribute(run_path, "/provenance", "fleetsim_version"))
    json.Field("fleetsim_version", *version);
  json.EndObject();
  json.Key("traceEvents");
  json.BeginArray();
  for (std::size_t g = 0; g < group_names.size(); ++g)
    Metadata(json, "process_name", static_cast<int>(g) + 1, 0, "group " + group_names[g]);
  Metadata(json, "process_name", unrouted_pid, 0, "never routed (arrived after the horizon)");
  for (int64_t i = 0; i < instance_rows.count; ++i) {
    const auto& row = instance_rows.at<output::InstanceRow>(i);
    Metadata(json, "thread_name", pid_of_instance[static_cast<std::size_t>(i)], row.id,
             "instance " + std::to_string(row.id) + " (" + Text(row.hardware, sizeof row.hardware) +
                 ", TP " + std::to_string(row.tp) + ")");
  }

  int64_t last_ns = 0;
  counts.has_steps = output::HasTable(run_path, "/steps");
  if (counts.has_steps) {
    output::ForEachRowBlock(
        run_path, "/steps", output::StepSchema(), kBlockRows, [&](const output::TableRows& rows) {
          for (int64_t i = 0; i < rows.count; ++i) {
            const auto& s = rows.at<output::StepRow>(i);
            const auto instance = static_cast<std::size_t>(s.instance);
            json.BeginObject();
            json.Field("name", StepName(s));
            json.Field("cat", "engine");
            json.Field("ph", "X");
            json.Field("pid", instance < pid_of_instance.size() ? pid_of_instance[instance] : 0);
            json.Field("tid", s.instance);
            Time(json, "ts", s.start_ns);
            Time(json, "dur", s.duration_ns);
            json.Key("args");
            json.BeginObject();
            json.Field("prefill_tokens", s.prefill_tokens);
            json.Field("prefill_chunks", s.prefill_chunks);
            json.Field("decodes", s.decodes);
            json.Field("generated_tokens", s.generated_tokens);
            json.Field("preemptions", s.preemptions);
            json.Field("cache_hit_tokens", s.cache_hit_tokens);
            json.Field("running", s.running);
            json.Field("waiting", s.waiting);
            json.Key("kv_usage");
            json.Value(s.kv_usage, 6);
            json.EndObject();
            json.EndObject();
            last_ns = std::max(last_ns, s.start_ns + s.duration_ns);
            ++counts.steps;
          }
        });
  }
  if (output::HasTable(run_path, "/requests")) {
    // Unfinished requests end where the run's last event is.
    output::ForEachRowBlock(run_path, "/requests", output::RequestSchema(), kBlockRows,
                            [&](const output::TableRows& rows) {
                              for (int64_t i = 0; i < rows.count; ++i) {
                                const auto& r = rows.at<output::RequestRow>(i);
                                last_ns = std::max({last_ns, r.arrival_ns, r.finish_ns});
                              }
                            });
    output::ForEachRowBlock(
        run_path, "/requests", output::RequestSchema(), kBlockRows,
        [&](const output::TableRows& rows) {
          for (int64_t i = 0; i < rows.count; ++i) {
            const auto& r = rows.at<output::RequestRow>(i);
            const auto instance = static_cast<std::size_t>(r.instance);
            const int pid = r.instance >= 0 && instance < pid_of_instance.size()
                                ? pid_of_instance[instance]
                                : unrouted_pid;
            const std::string state = Text(r.state, sizeof r.state);
            const int64_t end_ns = r.finish_ns >= 0      ? r.finish_ns
                                   : state == "rejected" ? r.arrival_ns
                                                         : std::max(last_ns, r.arrival_ns);
            auto span = [&](const char* phase, const std::string& name, int64_t ns, bool args) {
              json.BeginObject();
              json.Field("name", name);
              json.Field("cat", "request");
              json.Field("ph", phase);
              json.Field("id", r.id);
              json.Field("pid", pid);
              json.Field("tid", r.instance);
              Time(json, "ts", ns);
              if (args) {
                json.Key("args");
                json.BeginObject();
                json.Field("name", Text(r.name, sizeof r.name));
                json.Field("state", state);
                json.Field("reason", Text(r.reason, sizeof r.reason));
                json.Field("instance", r.instance);
                json.Field("gateway", r.gateway);
                json.Field("input_tokens", r.input_tokens);
                json.Field("output_tokens", r.output_tokens);
                json.Field("cached_tokens", r.cached_tokens);
                json.Field("preemptions", r.preemptions);
                json.Key("ttft_s");
                json.Value(r.ttft_s);
                json.Key("e2e_s");
                json.Value(r.e2e_s);
                json.EndObject();
              }
              json.EndObject();
            };
            const std::string name = "request " + Text(r.name, sizeof r.name);
            span("b", name, r.arrival_ns, true);
            if (r.first_token_ns >= 0) {
              span("b", "to first token", r.arrival_ns, false);
              span("e", "to first token", r.first_token_ns, false);
            }
            span("e", name, end_ns, false);
            ++counts.requests;
          }
        });
  }
  json.EndArray();
  json.EndObject();
  out << '\n';
  return counts;
}

}  // namespace fleetsim::report
