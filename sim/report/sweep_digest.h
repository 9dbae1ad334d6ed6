// What the report shows of a sweep's aggregate (sweep.h5, table /sweep): every point's
// row, which columns were swept (those whose value differs between points), and each
// point's layout named by the swept columns. Columns are read by name, whatever the
// table holds, so a column added to /sweep later is picked up as an axis.
//
//   SweepDigest sweep = DigestSweep("runs/out/study/sweep.h5", "study");
//   sweep.axes;            // {"tp", "prefix_caching"} (replicas follow from tp)
//   sweep.layout[k];       // "tp 4, replicas 16, prefix_caching 1"
#pragma once

#include <string>
#include <vector>

#include "output/table_reader.h"

namespace fleetsim::report {

struct SweepDigest {
  std::string label;
  std::string path;
  std::string name;       // the spec's name (attribute `sweep`)
  std::string objective;  // goodput_per_gpu, goodput_per_dollar or max_rate
  std::vector<output::FrameColumn> columns;
  // Swept columns, in table order; replicas that follow from TP under a GPU budget are
  // left out (they still name the layouts).
  std::vector<std::string> axes;
  std::vector<std::string> layout;  // per row
  std::size_t rows = 0;

  const output::FrameColumn* Column(const std::string& name) const;
};

// The columns that describe a point's layout and load, of which the varying ones are the
// sweep's axes. The rest of /sweep are results.
const std::vector<std::string>& LayoutColumns();

// Reads a sweep file. A file without /sweep is an InputError naming it.
SweepDigest DigestSweep(const std::string& path, const std::string& label);

}  // namespace fleetsim::report
