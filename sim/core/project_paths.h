// Where fleetsim finds what it ships (models/, cluster_configs/): $FLEETSIM_HOME when
// set, else the source tree the binary was built from.
#pragma once

#include <filesystem>

namespace fleetsim {

std::filesystem::path ProjectRoot();
std::filesystem::path ModelsDir();
std::filesystem::path HardwareCatalogDir();

}  // namespace fleetsim
