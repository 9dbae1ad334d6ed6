// `fleetsim bundle calibrate-empty-tiles BUNDLE --model M --hardware H`: the cost of an
// empty FlashAttention 2 tile on one SM, fitted on a measured bundle's attention table
// (perf/kernel_db/empty_tile_fit.h), beside the analytic model's constant.
#pragma once

#include <CLI/CLI.hpp>

namespace fleetsim {

void AddCalibrateEmptyTilesCommand(CLI::App& bundle);

}  // namespace fleetsim
