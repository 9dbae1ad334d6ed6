// `fleetsim export --csv <run.h5>`: the run's tables as CSV files beside it (or in
// --dir): <stem>.requests.csv, .instances.csv, .summary.csv and .steps.csv when present.
#pragma once

#include <CLI/CLI.hpp>

namespace fleetsim {

void AddExportCommand(CLI::App& app);

}  // namespace fleetsim
