#include "core/project_paths.h"

#include <cstdlib>

#ifndef FLEETSIM_SOURCE_DIR
#error "FLEETSIM_SOURCE_DIR must be defined by the build"
#endif

namespace fleetsim {

std::filesystem::path ProjectRoot() {
  if (const char* home = std::getenv("FLEETSIM_HOME"); home != nullptr && *home != '\0') {
    return home;
  }
  return FLEETSIM_SOURCE_DIR;
}

std::filesystem::path ModelsDir() {
  return ProjectRoot() / "models";
}

std::filesystem::path HardwareCatalogDir() {
  return ProjectRoot() / "cluster_configs" / "hardware";
}

}  // namespace fleetsim
