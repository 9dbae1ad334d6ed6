// `fleetsim bundle build`: builds a performance bundle for a model card on a catalog GPU.
#pragma once

#include <CLI/CLI.hpp>

namespace fleetsim {

void AddBundleCommand(CLI::App& app);

}  // namespace fleetsim
