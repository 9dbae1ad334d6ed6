// `fleetsim sweep SPEC`: runs every point of a sweep spec (docs/SWEEPS.md) -- in one
// process, or spread over the ranks of one MPI allocation -- writes one HDF5 file per
// point and the aggregate sweep.csv / sweep.h5, and prints the ranking and the best
// layout. `--point K` runs one point (a Slurm array task), `--collect` builds the
// aggregate from the points' files, `--list` prints the points.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace fleetsim {

// `command_line` is recorded in each point's /provenance.
void AddSweepCommand(CLI::App& app, std::string command_line);

}  // namespace fleetsim
