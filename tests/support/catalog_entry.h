// A hardware catalog entry's text with one piece of it replaced: for tests that pass an
// edited copy as `--hardware FILE` (the copy's file name must be the entry's name).
//
//   TempFile copy("RTX-PRO-6000.yaml", CatalogEntryWith("RTX-PRO-6000",
//                 "gpus_per_pcie_switch: 2", "gpus_per_pcie_switch: 1"));
#pragma once

#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "core/project_paths.h"

namespace fleetsim::testing {

// Fails the calling test (and returns the entry unchanged) where `from` is not in it.
inline std::string CatalogEntryWith(const std::string& gpu, const std::string& from,
                                    const std::string& to) {
  std::ifstream in(HardwareCatalogDir() / (gpu + ".yaml"));
  std::stringstream text;
  text << in.rdbuf();
  std::string yaml = text.str();
  const std::size_t at = yaml.find(from);
  if (at == std::string::npos) {
    ADD_FAILURE() << "'" << from << "' is not in the catalog entry " << gpu;
    return yaml;
  }
  return yaml.replace(at, from.size(), to);
}

}  // namespace fleetsim::testing
