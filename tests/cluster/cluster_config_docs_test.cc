// docs/CLUSTER_CONFIG.md's key tables say what the settings' declarations say: the same
// keys in the same order, and for each its type, default and range -- so the docs and the
// code cannot drift apart.
#include <cstddef>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cluster/cluster_settings.h"

namespace fleetsim {
namespace {

using cluster_settings::ClusterConfigSections;
using cluster_settings::SettingSection;

std::string Trim(std::string text) {
  const std::size_t begin = text.find_first_not_of(' ');
  const std::size_t end = text.find_last_not_of(' ');
  return begin == std::string::npos ? "" : text.substr(begin, end - begin + 1);
}

// A cell as plain text: no backticks, no bold.
std::string Plain(std::string cell) {
  std::string out;
  for (char c : cell) {
    if (c != '`' && c != '*') out += c;
  }
  return Trim(out);
}

std::vector<std::string> Cells(const std::string& row) {
  std::vector<std::string> cells;
  std::stringstream in(row.substr(1));  // past the leading '|'
  std::string cell;
  while (std::getline(in, cell, '|'))
    cells.push_back(Trim(cell));
  return cells;
}

// The first table after the line `heading` whose header starts with "| key |": its header
// and rows, each split into cells.
std::vector<std::vector<std::string>> TableAfter(const std::string& markdown,
                                                 const std::string& heading) {
  std::vector<std::vector<std::string>> rows;
  std::stringstream in(markdown);
  std::string line;
  bool past_heading = false, in_table = false;
  while (std::getline(in, line)) {
    if (!past_heading) {
      past_heading = line == heading;
      continue;
    }
    if (!in_table) {
      if (line.rfind("| key |", 0) == 0) {
        in_table = true;
        rows.push_back(Cells(line));
      } else if (line.rfind("#", 0) == 0) {
        break;  // the next section: this one has no key table
      }
      continue;
    }
    if (line.rfind("|", 0) != 0) break;
    if (line.rfind("|---", 0) == 0) continue;
    rows.push_back(Cells(line));
  }
  return rows;
}

// Where each section's key table is in the docs.
std::string HeadingOf(const SettingSection& section) {
  if (section.name.empty()) return "Top-level keys:";
  if (section.name == "engine" || section.name == "speculative_config")
    return "### " + std::string(section.name);
  return "## " + std::string(section.name);
}

// Every way `markdown` disagrees with the declarations, one line each.
std::vector<std::string> DocMismatches(const std::string& markdown,
                                       const std::vector<SettingSection>& sections) {
  std::vector<std::string> out;
  for (const SettingSection& section : sections) {
    const std::string where = section.name.empty() ? "top level" : std::string(section.name);
    const auto table = TableAfter(markdown, HeadingOf(section));
    if (table.empty()) {
      out.push_back(where + ": no key table after '" + HeadingOf(section) + "'");
      continue;
    }
    const std::vector<std::string>& header = table[0];
    const auto column = [&](const std::string& name) -> std::ptrdiff_t {
      for (std::size_t i = 0; i < header.size(); ++i) {
        if (header[i].rfind(name, 0) == 0) return static_cast<std::ptrdiff_t>(i);
      }
      return -1;
    };
    const std::ptrdiff_t type = column("type"), fallback = column("default"),
                         required = column("required"), rule = column("rule");
    if (table.size() - 1 != section.settings.size()) {
      out.push_back(where + ": " + std::to_string(table.size() - 1) + " keys in the docs, " +
                    std::to_string(section.settings.size()) + " declared");
    }
    for (std::size_t i = 0; i + 1 < table.size() && i < section.settings.size(); ++i) {
      const std::vector<std::string>& row = table[i + 1];
      const SettingDoc& doc = section.settings[i];
      const std::string key(doc.spec.key);
      const auto cell = [&](std::ptrdiff_t c) {
        return c >= 0 && static_cast<std::size_t>(c) < row.size()
                   ? Plain(row[static_cast<std::size_t>(c)])
                   : std::string();
      };
      if (cell(0) != key) {
        out.push_back(where + ": row " + std::to_string(i + 1) + " is '" + cell(0) +
                      "', declared '" + key + "'");
        continue;
      }
      if (type >= 0 && cell(type) != NameOf(doc.spec.type)) {
        out.push_back(where + "." + key + ": type '" + cell(type) + "', declared '" +
                      std::string(NameOf(doc.spec.type)) + "'");
      }
      if (fallback >= 0 && cell(fallback) != doc.default_text) {
        out.push_back(where + "." + key + ": default '" + cell(fallback) + "', declared '" +
                      doc.default_text + "'");
      }
      if (required >= 0 && (cell(required) == "yes") != (doc.default_text == "required")) {
        out.push_back(where + "." + key + ": required '" + cell(required) + "', declared '" +
                      doc.default_text + "'");
      }
      const std::string range = doc.spec.range.Rule();
      if (rule >= 0 && !range.empty() && cell(rule).rfind(range, 0) != 0) {
        out.push_back(where + "." + key + ": rule '" + cell(rule) + "' does not start with '" +
                      range + "'");
      }
    }
  }
  return out;
}

std::string ReadDocs() {
  std::ifstream in(std::string(FLEETSIM_SOURCE_DIR) + "/docs/CLUSTER_CONFIG.md");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(ClusterConfigDocs, EveryKeyTableMatchesTheDeclarations) {
  const std::string docs = ReadDocs();
  ASSERT_FALSE(docs.empty());
  for (const std::string& mismatch : DocMismatches(docs, ClusterConfigSections()))
    ADD_FAILURE() << "docs/CLUSTER_CONFIG.md: " << mismatch;
}

TEST(ClusterConfigDocs, EverySectionIsChecked) {
  std::vector<std::string> names;
  for (const SettingSection& section : ClusterConfigSections())
    names.emplace_back(section.name);
  EXPECT_EQ(names, (std::vector<std::string>{"", "node_pools", "instance_groups", "engine",
                                             "speculative_config", "gateways", "latency", "slo",
                                             "timeseries"}));
}

// The checker itself: each kind of drift in a copy of the docs is found.
TEST(ClusterConfigDocs, DriftIsFound) {
  const std::string docs = ReadDocs();
  const auto drifted = [&](const std::string& from, const std::string& to) {
    std::string copy = docs;
    const std::size_t at = copy.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) copy.replace(at, from.size(), to);
    return DocMismatches(copy, ClusterConfigSections());
  };
  const auto has = [](const std::vector<std::string>& found, const std::string& text) {
    for (const std::string& line : found) {
      if (line.find(text) != std::string::npos) return true;
    }
    return false;
  };
  EXPECT_TRUE(has(drifted("| `gpu_memory_utilization` | number | 0.9 |",
                          "| `gpu_memory_utilization` | number | 0.85 |"),
                  "engine.gpu_memory_utilization: default '0.85', declared '0.9'"));
  EXPECT_TRUE(has(drifted("| `staleness_s` | number | 0.05 | in (0, 1e+09];",
                          "| `staleness_s` | number | 0.05 | > 0;"),
                  "gateways.staleness_s: rule"));
  EXPECT_TRUE(has(drifted("| `prefix_blocks` | integer |", "| `prefix_blocks` | number |"),
                  "gateways.prefix_blocks: type 'number', declared 'integer'"));
  EXPECT_TRUE(has(drifted("| `tpot_s` |", "| `tpot` |"), "slo: row 2 is 'tpot'"));
  EXPECT_TRUE(
      has(drifted("| `interval_s` | number | 1 | in (0, 1e+09];", ""), "timeseries: 0 keys"));
}

}  // namespace
}  // namespace fleetsim
