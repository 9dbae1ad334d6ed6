#include "report/run_digest.h"

#include <cmath>
#include <cstring>
#include <set>

#include "core/input_error.h"
#include "core/quantile_sketch.h"
#include "output/table_reader.h"

namespace fleetsim::report {
namespace {

// Rows read from /requests at a time: about 30 MiB.
constexpr int64_t kRequestBlock = 1 << 17;

std::string Text(const char* field, std::size_t size) {
  return std::string(field, strnlen(field, size));
}

template <typename Row>
std::vector<Row> ReadRows(const std::string& path, const std::string& dataset,
                          const output::TableSchema& schema) {
  const output::TableRows table = output::ReadTable(path, dataset, schema);
  std::vector<Row> rows(static_cast<std::size_t>(table.count));
  if (!rows.empty()) std::memcpy(rows.data(), table.bytes.data(), table.bytes.size());
  return rows;
}

// The sketches of one group (or the fleet): TTFT, TPOT, E2E.
struct Sketches {
  QuantileSketch metric[3];
  void Add(const output::RequestRow& r) {
    const double values[3] = {r.ttft_s, r.tpot_s, r.e2e_s};
    for (int m = 0; m < 3; ++m) {
      if (std::isfinite(values[m]) && values[m] >= 0) metric[m].Add(values[m]);
    }
  }
};

constexpr const char* kMetricNames[3] = {"TTFT", "TPOT", "E2E"};

void AddCurves(const std::string& group, const std::string& model, const Sketches& sketches,
               std::vector<LatencyCurve>& out) {
  for (int m = 0; m < 3; ++m) {
    const QuantileSketch& sketch = sketches.metric[m];
    if (sketch.count() == 0) continue;
    LatencyCurve curve{group, model, kMetricNames[m], sketch.count(), {}};
    for (double fraction : CurveFractions())
      curve.seconds.push_back(sketch.Quantile(fraction));
    out.push_back(std::move(curve));
  }
}

}  // namespace

const std::vector<double>& CurveFractions() {
  static const std::vector<double> fractions = [] {
    std::vector<double> f;
    for (int i = 0; i < 100; ++i)
      f.push_back(i / 100.0);
    f.insert(f.end(), {0.995, 0.999, 1.0});
    return f;
  }();
  return fractions;
}

std::vector<output::TimeseriesRow> ThinTimeseries(const std::vector<output::TimeseriesRow>& rows,
                                                  std::size_t max_points) {
  std::vector<output::TimeseriesRow> out;
  for (std::size_t begin = 0; begin < rows.size();) {
    std::size_t end = begin;
    while (end < rows.size() &&
           std::strncmp(rows[end].group, rows[begin].group, sizeof(rows[begin].group)) == 0)
      ++end;
    const std::size_t n = end - begin;
    const std::size_t stride = (n + max_points - 1) / std::max<std::size_t>(max_points, 1);
    for (std::size_t i = begin; i < end; i += stride) {
      const std::size_t last = std::min(i + stride, end);
      output::TimeseriesRow row = rows[i];  // its group and start time
      double running = 0, waiting = 0, kv = 0, prompt = 0, generated = 0;
      for (std::size_t j = i; j < last; ++j) {
        running += static_cast<double>(rows[j].running);
        waiting += static_cast<double>(rows[j].waiting);
        kv += rows[j].kv_usage;
        prompt += rows[j].prompt_tokens_per_s;
        generated += rows[j].generation_tokens_per_s;
      }
      const auto k = static_cast<double>(last - i);
      row.running = std::llround(running / k);
      row.waiting = std::llround(waiting / k);
      row.kv_usage = kv / k;
      row.prompt_tokens_per_s = prompt / k;
      row.generation_tokens_per_s = generated / k;
      out.push_back(row);
    }
    begin = end;
  }
  return out;
}

RunDigest DigestRun(const std::string& path, const std::string& label) {
  if (!output::HasTable(path, "/summary")) {
    throw InputError(path, 0, "",
                     "not a fleetsim run file (no /summary table; a sweep's file is sweep.h5)");
  }
  RunDigest run;
  run.label = label;
  run.path = path;
  for (const char* name :
       {"fleetsim_version", "cluster_config_path", "workload_path", "workload_format"}) {
    if (auto value = output::ReadStringAttribute(path, "/provenance", name))
      run.provenance[name] = *value;
  }
  run.summary = ReadRows<output::SummaryRow>(path, "/summary", output::SummarySchema());
  for (const output::SummaryRow& row : run.summary) {
    if (Text(row.group, sizeof row.group) == "fleet") run.fleet_duration_s = row.duration_s;
  }
  if (output::HasTable(path, "/instances"))
    run.instances = ReadRows<output::InstanceRow>(path, "/instances", output::InstanceSchema());
  std::vector<std::string> group_order;
  for (const output::InstanceRow& row : run.instances) {
    const std::string group = Text(row.group, sizeof row.group);
    if (run.model_of_group.emplace(group, Text(row.model, sizeof row.model)).second)
      group_order.push_back(group);
  }
  if (output::HasTable(path, "/timeseries")) {
    run.timeseries = ThinTimeseries(
        ReadRows<output::TimeseriesRow>(path, "/timeseries", output::TimeseriesSchema()),
        kMaxTimePoints);
  }
  run.has_requests = output::HasTable(path, "/requests");
  if (!run.has_requests) return run;

  // Instance id -> its group's index; requests that never reached an instance count in
  // the fleet's curves only.
  std::vector<int> group_of_instance(run.instances.size(), -1);
  for (std::size_t i = 0; i < run.instances.size(); ++i) {
    const std::string group = Text(run.instances[i].group, sizeof run.instances[i].group);
    for (std::size_t g = 0; g < group_order.size(); ++g) {
      if (group_order[g] == group) group_of_instance[i] = static_cast<int>(g);
    }
  }
  std::vector<Sketches> per_group(group_order.size());
  Sketches fleet;
  output::ForEachRowBlock(
      path, "/requests", output::RequestSchema(), kRequestBlock,
      [&](const output::TableRows& rows) {
        for (int64_t i = 0; i < rows.count; ++i) {
          const auto& r = rows.at<output::RequestRow>(i);
          fleet.Add(r);
          if (r.instance >= 0 && static_cast<std::size_t>(r.instance) < group_of_instance.size()) {
            const int g = group_of_instance[static_cast<std::size_t>(r.instance)];
            if (g >= 0) per_group[static_cast<std::size_t>(g)].Add(r);
          }
        }
      });
  std::set<std::string> models;
  for (std::size_t g = 0; g < group_order.size(); ++g) {
    const std::string& model = run.model_of_group[group_order[g]];
    models.insert(model);
    AddCurves(group_order[g], model, per_group[g], run.latency);
  }
  std::string all_models;
  for (const std::string& model : models)
    all_models += (all_models.empty() ? "" : ", ") + model;
  AddCurves("fleet", all_models, fleet, run.latency);
  return run;
}

}  // namespace fleetsim::report
