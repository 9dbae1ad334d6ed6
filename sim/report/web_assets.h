// Where the report finds what it embeds and runs: the charting libraries (Vega, Vega-Lite,
// vega-embed, installed from npm by scripts/install-deps.sh into web/node_modules, or
// copied to web/vendor by `cmake --install`) and web/render_images.mjs.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace fleetsim::report {

struct WebLibrary {
  std::string name;               // "vega", "vega-lite", "vega-embed"
  std::filesystem::path script;   // the minified browser build
  std::filesystem::path license;  // its LICENSE file
};

// The three libraries, in load order. A missing one is an InputError that says how to
// install it.
std::vector<WebLibrary> WebLibraries();
// web/render_images.mjs under the project root (source tree or installed share/).
std::filesystem::path RenderImagesScript();

}  // namespace fleetsim::report
