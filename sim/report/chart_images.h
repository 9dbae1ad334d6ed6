// Each chart of the report page as an SVG file (web/render_images.mjs under node: Vega's
// own SVG renderer, no browser) and a PNG file (rsvg-convert, librsvg2-bin). A missing
// program is a warning, not an error: the page is complete without the images.
#pragma once

#include <string>
#include <vector>

namespace fleetsim::report {

struct ChartImages {
  std::vector<std::string> files;
  std::vector<std::string> warnings;
};

// `page_data` is the page's JSON ({"datasets": ..., "charts": [...]}); files go to
// <out_dir>/<chart id>.svg and .png.
ChartImages WriteChartImages(const std::string& page_data, const std::string& out_dir, bool png);

}  // namespace fleetsim::report
