// Runs the points of a sweep: writes each point's cluster config, then its simulation(s)
// through a PointJobRunner -- `fleetsim sweep` passes one that calls RunJobOn, tests may
// pass a stand-in. For objective max_rate a point is a bisection over the rate scale.
//
// RunSweepPoints spreads the points over the ranks of `comm` (point k on rank k % size,
// each point on MPI_COMM_SELF) and agrees on failure: when any point fails, every rank
// throws -- the one that ran the lowest failing point its error, the others QuietExit.
//
//   PointJobRunner run = [&](const PointJob& job, MPI_Comm c) { ... return fleet_row; };
//   RunSweepPoints(spec, ExpandPoints(spec).points, "out/study", run, MPI_COMM_WORLD, log);
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <mpi.h>

#include "output/run_tables.h"
#include "sweep/sweep_points.h"
#include "sweep/sweep_spec.h"

namespace fleetsim {

// One simulation of a point: its cluster config at one rate scale, written to `output`.
struct PointJob {
  std::string cluster;
  std::string output;
  double rate_scale = 1.0;
};

// Runs a job collectively over `comm` and returns the fleet's /summary row.
using PointJobRunner = std::function<output::SummaryRow(const PointJob& job, MPI_Comm comm)>;

// Progress lines ("point 3: ..."), printed by the caller's choice.
using SweepLog = std::function<void(const std::string& line)>;

struct PointOutcome {
  output::SummaryRow fleet{};  // of the kept run
  double rate_scale = 1.0;     // of the kept run
  double max_rate_scale = 0;   // objective max_rate: the highest passing scale (0: none)
  int runs = 0;
};

// Writes PointConfigPath and PointResultPath of `point` under `output_dir`. Collective
// over `comm` (rank 0 of it writes the config and moves files; every rank simulates).
PointOutcome RunPoint(const SweepSpec& spec, const SweepPoint& point,
                      const std::filesystem::path& output_dir, const PointJobRunner& run,
                      MPI_Comm comm, const SweepLog& log);

// Runs every point, spread over the ranks of `comm`; see above.
void RunSweepPoints(const SweepSpec& spec, const std::vector<SweepPoint>& points,
                    const std::filesystem::path& output_dir, const PointJobRunner& run,
                    MPI_Comm comm, const SweepLog& log);

}  // namespace fleetsim
