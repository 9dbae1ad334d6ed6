#include "report/web_assets.h"

#include <vector>

#include "core/input_error.h"
#include "core/project_paths.h"

namespace fleetsim::report {
namespace {

namespace fs = std::filesystem;

// web/vendor/<file> (an install), else web/node_modules/<package>/<build path> (npm ci).
fs::path Find(const std::string& package, const std::string& build_path) {
  const fs::path web = ProjectRoot() / "web";
  const fs::path file = fs::path(build_path).filename();
  for (const fs::path& candidate :
       {web / "vendor" / package / file, web / "node_modules" / package / build_path}) {
    std::error_code error;
    if (fs::is_regular_file(candidate, error)) return candidate;
  }
  throw InputError((web / "node_modules" / package / build_path).string(), 0, "",
                   "the charting library " + package +
                       " is not installed: run scripts/install-deps.sh (npm ci in " + web.string() +
                       ")");
}

}  // namespace

std::vector<WebLibrary> WebLibraries() {
  std::vector<WebLibrary> libraries;
  for (const auto& [package, build] :
       {std::pair<std::string, std::string>{"vega", "build/vega.min.js"},
        {"vega-lite", "build/vega-lite.min.js"},
        {"vega-embed", "build/vega-embed.min.js"}}) {
    const fs::path script = Find(package, build);
    libraries.push_back({package, script, script.parent_path().parent_path() / "LICENSE"});
    if (!fs::exists(libraries.back().license))
      libraries.back().license = script.parent_path() / "LICENSE";  // web/vendor/<package>/
  }
  return libraries;
}

fs::path RenderImagesScript() {
  return ProjectRoot() / "web" / "render_images.mjs";
}

}  // namespace fleetsim::report
