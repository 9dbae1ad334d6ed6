// `fleetsim report RUN.h5 [MORE.h5 ...] [--out DIR]`: one self-contained HTML page of runs
// and sweeps (report/report_page.h), and each chart as SVG and PNG beside it.
#pragma once

#include <CLI/CLI.hpp>

namespace fleetsim {

void AddReportCommand(CLI::App& app);

}  // namespace fleetsim
