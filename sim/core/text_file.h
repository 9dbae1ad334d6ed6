// A whole (small) file as text: configs, catalog entries, bundle metadata. A file that
// cannot be read gives "" -- callers that must have it check its existence first.
//
//   const std::string yaml = ReadTextFile("cluster_configs/default_fleet.yaml");
#pragma once

#include <filesystem>
#include <string>

namespace fleetsim {

std::string ReadTextFile(const std::filesystem::path& path);

}  // namespace fleetsim
