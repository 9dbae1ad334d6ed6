// `fleetsim export --csv|--trace <run.h5>`: the run's tables as CSV files beside it (or
// in --dir, created when missing): <stem>.requests.csv, .instances.csv, .summary.csv,
// .timeseries.csv and .steps.csv when present; and/or <stem>.trace.json, a Chrome/Perfetto
// trace (report/chrome_trace.h).
#pragma once

#include <CLI/CLI.hpp>

namespace fleetsim {

void AddExportCommand(CLI::App& app);

}  // namespace fleetsim
