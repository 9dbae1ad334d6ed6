#include "perf/kernel_db/measured_collectives.h"

#include <algorithm>
#include <cmath>

#include "core/csv_reader.h"
#include "core/input_error.h"
#include "perf/kernel_db/aiconfigurator_csv.h"

namespace fleetsim {
namespace {

namespace fs = std::filesystem;

// The one folder of `system` whose name starts with `prefix` and holds `file`, and the
// version its name carries ("nccl_2.29.2" -> "2.29.2"); the vLLM folder with a comm table.
fs::path FindTable(const fs::path& system_dir, const std::string& prefix, const fs::path& file,
                   std::string& version) {
  std::vector<fs::path> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(system_dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) == 0 && fs::is_regular_file(entry.path() / file))
      found.push_back(entry.path());
  }
  if (found.size() != 1) {
    throw InputError(system_dir.string(), 0, prefix + "*/" + file.string(),
                     found.empty() ? "no such table" : "more than one such table");
  }
  version = found.front().filename().string().substr(prefix.size());
  return found.front() / file;
}

}  // namespace

MeasuredCollectives LoadMeasuredCollectives(const fs::path& dir, const std::string& system) {
  if (system != "a100_sxm" && system != "h100_sxm" && system != "h200_sxm") {
    throw InputError(dir.string(), 0, "system",
                     "unknown system '" + system + "' (known: a100_sxm, h100_sxm, h200_sxm)");
  }
  MeasuredCollectives t;
  t.system = system;
  t.nccl_file = FindTable(dir / system, "nccl_", "nccl_perf.csv", t.nccl_version);
  t.vllm_file = FindTable(dir / system, "vllm_", fs::path("comm") / "custom_allreduce_perf.csv",
                          t.vllm_version);

  CsvReader nccl(t.nccl_file.string());
  nccl.RequireColumns({"op_name", "nccl_dtype", "num_gpus", "message_size", "latency"});
  while (nccl.Next()) {
    MeasuredCollective row;
    row.operation = std::string(nccl.Text("op_name"));
    if (row.operation != "all_gather" && row.operation != "reduce_scatter" &&
        row.operation != "all_reduce" && row.operation != "alltoall") {
      nccl.Fail("op_name", "unknown collective '" + row.operation + "'");
    }
    row.dtype = std::string(nccl.Text("nccl_dtype"));
    if (row.dtype != "half" && row.dtype != "int8") {
      nccl.Fail("nccl_dtype", "unknown type '" + row.dtype + "' (half or int8)");
    }
    row.gpus = static_cast<int>(PositiveCount(nccl, "num_gpus"));
    row.bytes = PositiveCount(nccl, "message_size") * (row.dtype == "half" ? 2 : 1);
    row.measured_us = AiconfiguratorLatencyUs(nccl);
    t.rows.push_back(row);
  }

  CsvReader vllm(t.vllm_file.string());
  vllm.RequireColumns({"allreduce_dtype", "num_gpus", "message_size", "latency", "backend"});
  while (vllm.Next()) {
    MeasuredCollective row;
    const std::string backend(vllm.Text("backend"));
    if (backend == "vllm_graph") {
      row.source = CollectiveSource::kVllmGraph;
    } else if (backend == "vllm_eager") {
      row.source = CollectiveSource::kVllmEager;
    } else {
      vllm.Fail("backend", "unknown backend '" + backend + "' (vllm_graph or vllm_eager)");
    }
    row.operation = "all_reduce";
    row.dtype = std::string(vllm.Text("allreduce_dtype"));
    if (row.dtype != "bfloat16") vllm.Fail("allreduce_dtype", "expected bfloat16");
    row.gpus = static_cast<int>(PositiveCount(vllm, "num_gpus"));
    row.bytes = PositiveCount(vllm, "message_size") * 2;
    row.measured_us = AiconfiguratorLatencyUs(vllm);
    t.rows.push_back(row);
  }
  return t;
}

}  // namespace fleetsim
