#include "core/project_paths.h"

#include <cstdlib>
#include <system_error>

#ifndef FLEETSIM_SOURCE_DIR
#error "FLEETSIM_SOURCE_DIR must be defined by the build"
#endif

namespace fleetsim {
namespace {

namespace fs = std::filesystem;

// The variable's value, or nullptr when it is unset or empty.
const char* Variable(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : nullptr;
}

// <prefix>/share/fleetsim when this binary runs from <prefix>/bin and that folder holds the
// model cards (cmake --install put them there); empty otherwise.
fs::path InstalledShare() {
  std::error_code error;
  const fs::path binary = fs::read_symlink("/proc/self/exe", error);
  if (error || binary.parent_path().filename() != "bin") return {};
  const fs::path share = binary.parent_path().parent_path() / "share" / "fleetsim";
  return fs::is_directory(share / "models", error) ? share : fs::path();
}

}  // namespace

fs::path ProjectRoot() {
  if (const char* home = Variable("FLEETSIM_HOME")) return home;
  static const fs::path installed = InstalledShare();
  if (!installed.empty()) return installed;
  return FLEETSIM_SOURCE_DIR;
}

fs::path ModelsDir() {
  return ProjectRoot() / "models";
}

fs::path HardwareCatalogDir() {
  return ProjectRoot() / "cluster_configs" / "hardware";
}

fs::path CacheRoot() {
  if (const char* cache = Variable("FLEETSIM_CACHE")) return cache;
  if (const char* xdg = Variable("XDG_CACHE_HOME")) return fs::path(xdg) / "fleetsim";
  if (const char* home = Variable("HOME")) return fs::path(home) / ".cache" / "fleetsim";
  // No home at all (a bare container job): a folder of the working directory.
  return fs::path(".cache") / "fleetsim";
}

}  // namespace fleetsim
