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
  static const std::vector<std::string> names = {"tp",
                                                 "dp",
                                                 "replicas",
                                                 "gpus",
                                                 "hardware",
                                                 "prefix_caching",
                                                 "max_num_batched_tokens",
                                                 "max_num_seqs",
                                                 "policy",
                                                 "capacity_weighted",
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
  // Layouts name every varying column; the charts plot against the free ones.
  const std::vector<std::string> named = sweep.axes;
  // Replicas that follow from TP (and DP) under a GPU budget (TP x DP x replicas the same
  // at every point) are no axis of their own: a chart against them would repeat the one
  // against TP or DP.
  const output::FrameColumn* tp = sweep.Column("tp");
  const output::FrameColumn* dp = sweep.Column("dp");  // absent in sweeps before it
  const output::FrameColumn* replicas = sweep.Column("replicas");
  const auto swept = [&sweep](const char* axis) {
    return std::find(sweep.axes.begin(), sweep.axes.end(), axis) != sweep.axes.end();
  };
  if (tp && replicas && !tp->text && !replicas->text && (!dp || !dp->text) &&
      (swept("tp") || swept("dp"))) {
    const auto gpus = [&](std::size_t r) {
      return tp->numbers[r] * (dp ? dp->numbers[r] : 1.0) * replicas->numbers[r];
    };
    bool budget = true;
    for (std::size_t r = 0; r < sweep.rows; ++r)
      budget = budget && gpus(r) == gpus(0);
    if (budget) std::erase(sweep.axes, std::string("replicas"));
  }
  sweep.layout.assign(sweep.rows, "");
  for (std::size_t r = 0; r < sweep.rows; ++r) {
    for (const std::string& axis : named) {
      sweep.layout[r] +=
          (sweep.layout[r].empty() ? "" : ", ") + axis + " " + Cell(*sweep.Column(axis), r);
    }
    if (sweep.layout[r].empty()) sweep.layout[r] = "point " + std::to_string(r);
  }
  return sweep;
}

}  // namespace fleetsim::report
