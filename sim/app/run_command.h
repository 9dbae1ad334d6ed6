// `fleetsim run`: simulates a cluster config's instances serving a workload, in one
// process, and writes the results to one HDF5 file plus a summary table on stdout.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace fleetsim {

// `command_line` is recorded in the output's /provenance.
void AddRunCommand(CLI::App& app, std::string command_line);

}  // namespace fleetsim
