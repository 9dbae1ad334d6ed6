// Where fleetsim finds what it ships (models/, cluster_configs/, runs/examples/, web/) and
// where it caches what it builds.
//
// Shipped files: $FLEETSIM_HOME when set; else, for an installed binary
// (<prefix>/bin/fleetsim), <prefix>/share/fleetsim when it holds models/; else the source
// tree the binary was built from.
//
// The cache (analytic bundles): $FLEETSIM_CACHE when set; else $XDG_CACHE_HOME/fleetsim;
// else $HOME/.cache/fleetsim. Never inside the shipped files, which may be read-only.
#pragma once

#include <filesystem>

namespace fleetsim {

std::filesystem::path ProjectRoot();
std::filesystem::path ModelsDir();
std::filesystem::path HardwareCatalogDir();
std::filesystem::path CacheRoot();

}  // namespace fleetsim
