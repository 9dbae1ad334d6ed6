#include "report/sweep_digest.h"

#include <algorithm>
#include <set>

#include "core/format.h"
#include "core/input_error.h"

namespace fleetsim::report {
namespace {

std::string Cell(const output::FrameColumn& column, std::size_t row) {
  return column.text ? column.texts[row] : Significant(column.numbers[row], 6);
}

bool Varies(const output::FrameColumn& column) {
  if (column.text) return std::set(column.texts.begin(), column.texts.end()).size() > 1;
  return std::set(column.numbers.begin(), column.numbers.end()).size() > 1;
}

}  // namespace

const output::FrameColumn* SweepDigest::Column(const std::string& column_name) const {
  for (const output::FrameColumn& column : columns) {
    if (column.name == column_name) return &column;
  }
  return nullptr;
}

const std::vector<std::string>& LayoutColumns() {
  static const std::vector<std::string> names = {
      "tp",           "replicas",       "gpus",
      "hardware",     "prefix_caching", "max_num_batched_tokens",
      "max_num_seqs", "policy",         "capacity_weighted",
      "rate_scale"};
  return names;
}

SweepDigest DigestSweep(const std::string& path, const std::string& label) {
  if (!output::HasTable(path, "/sweep"))
    throw InputError(path, 0, "", "not a fleetsim sweep file (no /sweep table)");
  SweepDigest sweep;
  sweep.label = label;
  sweep.path = path;
  sweep.name = output::ReadStringAttribute(path, "/sweep", "sweep").value_or(label);
  sweep.objective = output::ReadStringAttribute(path, "/sweep", "objective").value_or("");
  sweep.columns = output::ReadFrame(path, "/sweep");
  if (!sweep.columns.empty()) {
    const output::FrameColumn& first = sweep.columns.front();
    sweep.rows = first.text ? first.texts.size() : first.numbers.size();
  }
  for (const output::FrameColumn& column : sweep.columns) {
    const bool layout = std::find(LayoutColumns().begin(), LayoutColumns().end(), column.name) !=
                        LayoutColumns().end();
    // gpus follows from tp and replicas: an axis only when those do not vary.
    if (layout && Varies(column) && column.name != "gpus") sweep.axes.push_back(column.name);
  }
  // Under max_rate the rate scale is the result, not an axis.
  if (sweep.objective == "max_rate") std::erase(sweep.axes, std::string("rate_scale"));
  sweep.layout.assign(sweep.rows, "");
  for (std::size_t r = 0; r < sweep.rows; ++r) {
    for (const std::string& axis : sweep.axes) {
      sweep.layout[r] +=
          (sweep.layout[r].empty() ? "" : ", ") + axis + " " + Cell(*sweep.Column(axis), r);
    }
    if (sweep.layout[r].empty()) sweep.layout[r] = "point " + std::to_string(r);
  }
  return sweep;
}

}  // namespace fleetsim::report
