// Holds the build to the table of parts in docs/DESIGN.md ("may depend on"). It reads that
// table, every #include under sim/, comm/ and tests/, and the link libraries of every
// library target (written by CMake at configure time, see CMakeLists.txt here), and fails
// naming file:line when
//   - a part includes a header of a part, or a library (MPI, HDF5, TBB, ...), the table
//     does not allow it, directly or through a part it may depend on;
//   - a part includes a header of a part its target does not link (a wrong include would
//     otherwise still build wherever only inline code or types are used);
//   - a target links a part or a library the table does not allow;
//   - a part's internal/ header is included from outside that part;
//   - a source file, a library target or a name in the table belongs to no row.
// A test belongs to the part of what it tests: tests/engine/scheduler_test.cc to the part
// of sim/engine/scheduler.cc, tests/perf/kernel_db_test.cc to that of sim/perf/kernel_db/,
// otherwise to its folder's part; tests/support/ is shared by all tests. Only the standard
// library is used, so the check depends on nothing it checks.
//
//   layering_check <source dir> <link graph file>
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

// A library a part may depend on, as the table names it, with the include prefixes and
// CMake link names that mean it.
struct Library {
  std::string name;
  std::vector<std::string> includes;
  std::vector<std::string> links;
};

const std::vector<Library>& Libraries() {
  static const std::vector<Library> libraries = {
      {"yaml-cpp", {"yaml-cpp/"}, {"yaml-cpp", "yaml-cpp::yaml-cpp"}},
      {"MPI", {"mpi.h"}, {"MPI::MPI_CXX", "MPI::MPI_C"}},
      {"HDF5", {"hdf5.h", "H5"}, {"HDF5::HDF5", "hdf5::hdf5"}},
      {"TBB", {"tbb/", "oneapi/tbb"}, {"TBB::tbb"}},
      {"CLI11", {"CLI/"}, {"CLI11::CLI11"}},
  };
  return libraries;
}
// Only tests may use GoogleTest; it is in no row of the table.
const std::vector<std::string> kTestOnlyIncludes = {"gtest/", "gmock/"};
// Link items that carry build settings, not code.
const std::set<std::string> kBuildOnlyLinks = {"fleetsim_warnings"};

struct Part {
  std::string name;
  std::string target;
  std::vector<std::string> folders;  // "sim/core/"
  std::vector<std::string> stems;  // "sim/bundles/kernel_db_bundle" (from `...kernel_db_bundle.*`)
  std::vector<std::string> deps;   // part and library names, as the table lists them
  int line = 0;                    // in docs/DESIGN.md
  std::set<std::string> allowed;   // parts and libraries, transitively
};

class Check {
 public:
  explicit Check(fs::path root) : root_(std::move(root)) {}

  int Run(const fs::path& link_graph) {
    ReadTable();
    if (parts_.empty()) return Finish();
    for (Part& part : parts_)
      Closure(part, {});
    ReadLinkGraph(link_graph);
    CheckLinks();
    for (const char* top : {"sim", "comm", "tests"}) {
      if (!fs::is_directory(root_ / top)) continue;
      std::vector<fs::path> files;
      for (const auto& entry : fs::recursive_directory_iterator(root_ / top)) {
        const std::string ext = entry.path().extension().string();
        if (entry.is_regular_file() &&
            (ext == ".h" || ext == ".cc" || ext == ".hpp" || ext == ".cpp"))
          files.push_back(entry.path());
      }
      std::sort(files.begin(), files.end());
      for (const fs::path& file : files)
        CheckFile(fs::relative(file, root_).generic_string());
    }
    return Finish();
  }

 private:
  void Error(const std::string& message) { errors_.push_back(message); }

  int Finish() {
    for (const std::string& e : errors_)
      std::cout << e << "\n";
    if (!errors_.empty()) {
      std::cout << "layering_check: " << errors_.size()
                << " violation(s) of the table of parts in docs/DESIGN.md\n";
      return 1;
    }
    std::cout << "layering_check: " << parts_.size() << " parts, " << files_ << " files, "
              << includes_ << " includes and " << links_ << " links agree with docs/DESIGN.md\n";
    return 0;
  }

  static std::string Trim(std::string s) {
    const auto first = s.find_first_not_of(" \t");
    if (first == std::string::npos) return "";
    return s.substr(first, s.find_last_not_of(" \t") - first + 1);
  }

  static std::vector<std::string> Cells(const std::string& row) {
    std::vector<std::string> cells;
    std::stringstream in(row.substr(row.find('|') + 1));
    std::string cell;
    while (std::getline(in, cell, '|'))
      cells.push_back(Trim(cell));
    if (!cells.empty() && cells.back().empty()) cells.pop_back();
    return cells;
  }

  static std::vector<std::string> Backticked(const std::string& cell) {
    std::vector<std::string> out;
    static const std::regex code("`([^`]+)`");
    for (auto it = std::sregex_iterator(cell.begin(), cell.end(), code);
         it != std::sregex_iterator(); ++it)
      out.push_back((*it)[1]);
    return out;
  }

  const Library* LibraryNamed(const std::string& name) const {
    for (const Library& lib : Libraries())
      if (lib.name == name) return &lib;
    return nullptr;
  }

  Part* PartNamed(const std::string& name) {
    for (Part& part : parts_)
      if (part.name == name) return &part;
    return nullptr;
  }

  // The table under "## The parts and what each owns": one row per part.
  void ReadTable() {
    const std::string design = "docs/DESIGN.md";
    std::ifstream in(root_ / design);
    if (!in) return Error(design + ": cannot read");
    std::string line;
    int number = 0;
    bool in_section = false;
    std::map<std::string, std::size_t> column;
    while (std::getline(in, line)) {
      ++number;
      if (line.rfind("## ", 0) == 0) {
        if (in_section) break;
        in_section = line == "## The parts and what each owns";
        continue;
      }
      if (!in_section || line.rfind("|", 0) != 0) {
        if (in_section && !column.empty()) break;  // the table has ended
        continue;
      }
      const std::vector<std::string> cells = Cells(line);
      if (column.empty()) {
        for (std::size_t i = 0; i < cells.size(); ++i)
          column[cells[i]] = i;
        for (const char* name : {"part", "folder", "target", "may depend on"})
          if (!column.count(name))
            return Error(design + ":" + std::to_string(number) + ": the table has no column '" +
                         name + "'");
        continue;
      }
      if (line.rfind("|---", 0) == 0) continue;
      const std::string where = design + ":" + std::to_string(number) + ": ";
      if (cells.size() < column.size()) {
        Error(where + "a row with " + std::to_string(cells.size()) + " cells");
        continue;
      }
      Part part;
      part.name = cells[column["part"]];
      part.line = number;
      for (const std::string& folder : Backticked(cells[column["folder"]])) {
        if (folder.size() > 2 && folder.ends_with(".*")) {
          part.stems.push_back(folder.substr(0, folder.size() - 2));
        } else if (folder.ends_with("/")) {
          if (!fs::is_directory(root_ / folder)) Error(where + "no folder " + folder);
          part.folders.push_back(folder);
        } else {
          Error(where + "`" + folder + "`: a folder ends with '/', a file stem with '.*'");
        }
      }
      if (part.folders.empty() && part.stems.empty()) Error(where + part.name + " has no folder");
      const std::vector<std::string> target = Backticked(cells[column["target"]]);
      if (target.size() != 1)
        Error(where + part.name + " needs one `target`");
      else
        part.target = target[0];
      std::string deps = cells[column["may depend on"]];
      if (const auto dash = deps.find(" -- "); dash != std::string::npos) deps.resize(dash);
      std::stringstream list(deps);
      std::string dep;
      while (std::getline(list, dep, ',')) {
        dep = Trim(dep);
        if (dep.ends_with(" only")) dep.resize(dep.size() - 5);
        if (dep == "the standard library" || dep.empty()) continue;
        if (dep == "everything above") {
          for (const Part& above : parts_)
            part.deps.push_back(above.name);
        } else {
          part.deps.push_back(dep);
        }
      }
      parts_.push_back(std::move(part));
    }
    if (parts_.empty())
      Error(design + ": no table of parts under '## The parts and what each owns'");
    for (const Part& part : parts_)
      for (const std::string& dep : part.deps)
        if (!LibraryNamed(dep) && !PartNamed(dep))
          Error(design + ":" + std::to_string(part.line) + ": " + part.name + " may depend on '" +
                dep + "', which is no part and no library the check knows");
  }

  void Closure(Part& part, std::vector<std::string> path) {
    if (!part.allowed.empty() || part.deps.empty()) return;
    if (std::find(path.begin(), path.end(), part.name) != path.end())
      return Error("docs/DESIGN.md:" + std::to_string(part.line) + ": " + part.name +
                   " depends on itself through the table");
    path.push_back(part.name);
    std::set<std::string> allowed;
    for (const std::string& dep : part.deps) {
      allowed.insert(dep);
      if (Part* below = PartNamed(dep)) {
        Closure(*below, path);
        allowed.insert(below->allowed.begin(), below->allowed.end());
      }
    }
    part.allowed = std::move(allowed);
  }

  // The part a file of sim/ or comm/ belongs to: a file stem beats a folder, a longer
  // folder beats a shorter one.
  const Part* PartOfSource(const std::string& path) const {
    const std::string stem = path.substr(0, path.rfind('.'));
    const Part* best = nullptr;
    std::size_t best_length = 0;
    for (const Part& part : parts_) {
      for (const std::string& s : part.stems)
        if (s == stem) return &part;
      for (const std::string& folder : part.folders)
        if (path.rfind(folder, 0) == 0 && folder.size() > best_length) {
          best = &part;
          best_length = folder.size();
        }
    }
    return best;
  }

  // The part a file under tests/ tests (see the top of this file); nullptr for shared
  // helpers (tests/support/) and anything that tests no part.
  const Part* PartOfTest(const std::string& path) const {
    std::string rel = path.substr(std::string("tests/").size());
    std::string base = rel.substr(0, rel.rfind('.'));
    if (base.ends_with("_test")) base.resize(base.size() - 5);
    for (const std::string prefix : {"sim/", ""}) {
      for (const char* ext : {".cc", ".h"})
        if (fs::is_regular_file(root_ / (prefix + base + ext)))
          return PartOfSource(prefix + base + ext);
      if (fs::is_directory(root_ / (prefix + base))) return PartOfSource(prefix + base + "/");
    }
    const std::string dir = rel.substr(0, rel.find('/') + 1);
    for (const std::string prefix : {"sim/", ""})
      if (dir.size() > 1 && fs::is_directory(root_ / (prefix + dir)))
        return PartOfSource(prefix + dir);
    return nullptr;
  }

  void ReadLinkGraph(const fs::path& file) {
    std::ifstream in(file);
    if (!in) return Error(file.string() + ": cannot read the link graph");
    std::string line;
    while (std::getline(in, line)) {
      std::stringstream fields(line);
      std::string target, cmake_file, links;
      fields >> target >> cmake_file >> links;
      if (target.empty()) continue;
      std::vector<std::string>& list = links_of_[target];
      cmake_file_of_[target] = cmake_file;
      std::stringstream items(links);
      std::string item;
      while (std::getline(items, item, ';'))
        if (!item.empty()) list.push_back(item);
    }
  }

  const Part* PartOfTarget(const std::string& target) const {
    for (const Part& part : parts_)
      if (part.target == target) return &part;
    return nullptr;
  }

  const Library* LibraryLinkedAs(const std::string& item) const {
    for (const Library& lib : Libraries())
      if (std::find(lib.links.begin(), lib.links.end(), item) != lib.links.end()) return &lib;
    return nullptr;
  }

  // Every part and library a target links, directly or through the targets it links.
  const std::set<std::string>& Linked(const std::string& target) {
    if (auto it = linked_.find(target); it != linked_.end()) return it->second;
    linked_[target];  // empty while in progress, so that a cycle ends
    std::set<std::string> out;
    for (const std::string& item : links_of_[target]) {
      if (const Part* part = PartOfTarget(item)) {
        out.insert(part->name);
        const std::set<std::string>& below = Linked(item);
        out.insert(below.begin(), below.end());
      } else if (const Library* lib = LibraryLinkedAs(item)) {
        out.insert(lib->name);
      }
    }
    return linked_[target] = std::move(out);
  }

  void CheckLinks() {
    for (const Part& part : parts_)
      if (!part.target.empty() && !links_of_.count(part.target))
        Error("docs/DESIGN.md:" + std::to_string(part.line) + ": " + part.name + "'s target " +
              part.target + " is no library target under sim/ or comm/");
    for (const auto& [target, items] : links_of_) {
      const Part* part = PartOfTarget(target);
      const std::string where = cmake_file_of_[target] + ": " + target;
      if (!part) {
        Error(where + " is the target of no part in docs/DESIGN.md's table");
        continue;
      }
      for (const std::string& item : items) {
        ++links_;
        if (kBuildOnlyLinks.count(item)) continue;
        std::string name;
        if (const Part* other = PartOfTarget(item))
          name = other->name;
        else if (const Library* lib = LibraryLinkedAs(item))
          name = lib->name;
        if (name.empty()) {
          Error(where + " links " + item +
                ", which is no part's target and no library the check knows");
        } else if (name != part->name && !part->allowed.count(name)) {
          Error(where + " links " + item + ": " + part->name + " may not depend on " + name +
                " (docs/DESIGN.md:" + std::to_string(part->line) + ")");
        }
      }
    }
  }

  // The file a quoted include names, as the compiler finds it: a test's own tests/ first,
  // then sim/, then the source root (comm/).
  std::optional<std::string> Resolve(const std::string& include, bool is_test) const {
    std::vector<std::string> roots = {"sim/", ""};
    if (is_test) roots.insert(roots.begin(), "tests/");
    for (const std::string& r : roots)
      if (fs::is_regular_file(root_ / (r + include))) return r + include;
    return std::nullopt;
  }

  void CheckFile(const std::string& path) {
    const bool is_test = path.rfind("tests/", 0) == 0;
    const Part* part = is_test ? PartOfTest(path) : PartOfSource(path);
    if (!part) {
      if (!is_test) Error(path + ": in no part of docs/DESIGN.md's table (add a row or a folder)");
      return;
    }
    ++files_;
    const std::set<std::string> empty;
    const std::set<std::string>& linked =
        is_test || part->target.empty() ? empty : Linked(part->target);
    std::ifstream in(root_ / path);
    static const std::regex include_line(R"(^\s*#\s*include\s*([<"])([^>"]+)[>"])");
    std::string line;
    int number = 0;
    while (std::getline(in, line)) {
      ++number;
      std::smatch m;
      if (!std::regex_search(line, m, include_line)) continue;
      ++includes_;
      const std::string include = m[2];
      const std::string where = path + ":" + std::to_string(number) + ": #include " +
                                (m[1] == "<" ? "<" + include + ">" : "\"" + include + "\"");
      const std::string rule = " (docs/DESIGN.md:" + std::to_string(part->line) + ")";
      if (m[1] == "<") {
        for (const std::string& prefix : kTestOnlyIncludes)
          if (include.rfind(prefix, 0) == 0 && !is_test)
            Error(where + ": only tests use GoogleTest");
        for (const Library& lib : Libraries()) {
          if (std::none_of(lib.includes.begin(), lib.includes.end(),
                           [&](const std::string& p) { return include.rfind(p, 0) == 0; }))
            continue;
          if (!part->allowed.count(lib.name))
            Error(where + ": " + part->name + " may not depend on " + lib.name + rule);
          else if (!is_test && !linked.count(lib.name))
            Error(where + ": " + part->target + " does not link " + lib.name);
        }
        continue;
      }
      const std::optional<std::string> file = Resolve(include, is_test);
      if (!file) {
        Error(where + ": no such file under " + (is_test ? "tests/, " : "") +
              "sim/ or the source root");
        continue;
      }
      const bool test_helper = file->rfind("tests/", 0) == 0;
      if (test_helper && file->rfind("tests/support/", 0) == 0) continue;
      const Part* other = test_helper ? PartOfTest(*file) : PartOfSource(*file);
      if (!other) {
        Error(where + ": " + *file + " is in no part of docs/DESIGN.md's table");
        continue;
      }
      if (other == part) continue;
      if (file->find("/internal/") != std::string::npos)
        Error(where + ": a header internal to " + other->name);
      if (!part->allowed.count(other->name))
        Error(where + ": " + part->name + " may not depend on " + other->name + rule);
      else if (!is_test && !test_helper && !linked.count(other->name))
        Error(where + ": " + part->target + " does not link " + other->target);
    }
  }

  fs::path root_;
  std::vector<Part> parts_;
  std::map<std::string, std::vector<std::string>> links_of_;
  std::map<std::string, std::string> cmake_file_of_;
  std::map<std::string, std::set<std::string>> linked_;
  std::vector<std::string> errors_;
  int files_ = 0;
  int includes_ = 0;
  int links_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: layering_check <source dir> <link graph file>\n";
    return 2;
  }
  return Check(argv[1]).Run(argv[2]);
}
