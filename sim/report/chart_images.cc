#include "report/chart_images.h"

#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "report/web_assets.h"

extern char** environ;

namespace fleetsim::report {
namespace {

namespace fs = std::filesystem;

// Runs a program found on PATH with `args`, its output to `log`; its exit status, or -1
// when it could not be started.
int RunProgram(const std::vector<std::string>& args, const std::string& log) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(),
                                   O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  std::vector<char*> argv;
  for (const std::string& arg : args)
    argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return -1;
  int status = 0;
  if (waitpid(pid, &status, 0) < 0) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

bool OnPath(const std::string& program) {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return false;
  const std::string all = path;
  for (std::size_t begin = 0; begin <= all.size();) {
    const std::size_t end = std::min(all.find(':', begin), all.size());
    const fs::path candidate = fs::path(all.substr(begin, end - begin)) / program;
    if (::access(candidate.c_str(), X_OK) == 0) return true;
    begin = end + 1;
  }
  return false;
}

std::string Tail(const std::string& log) {
  std::ifstream in(log);
  std::string line, last;
  while (std::getline(in, line)) {
    if (!line.empty()) last = line;
  }
  return last;
}

}  // namespace

ChartImages WriteChartImages(const std::string& page_data, const std::string& out_dir, bool png) {
  ChartImages result;
  if (!OnPath("node")) {
    result.warnings.push_back(
        "no SVG or PNG files: node is not on PATH (Debian: apt-get install nodejs); the page "
        "is complete without them");
    return result;
  }
  const fs::path dir(out_dir);
  const fs::path data = dir / ".report-data.json";
  const fs::path log = dir / ".render.log";
  {
    std::ofstream out(data, std::ios::binary);
    out << page_data;
  }
  fs::remove(log);
  std::vector<std::string> args = {"node", RenderImagesScript().string(), data.string(),
                                   dir.string()};
  for (const WebLibrary& library : WebLibraries()) {
    if (library.name != "vega-embed") args.push_back(library.script.string());  // browser only
  }
  const int status = RunProgram(args, log.string());
  fs::remove(data);
  if (status != 0) {
    result.warnings.push_back("no SVG or PNG files: web/render_images.mjs failed (exit " +
                              std::to_string(status) + "): " + Tail(log.string()));
    return result;
  }
  // The script prints one SVG path per line.
  std::vector<std::string> svgs;
  {
    std::ifstream in(log);
    for (std::string line; std::getline(in, line);) {
      if (line.size() > 4 && line.ends_with(".svg")) svgs.push_back(line);
    }
  }
  fs::remove(log);
  result.files = svgs;
  if (!png) return result;
  if (!OnPath("rsvg-convert")) {
    result.warnings.push_back(
        "no PNG files: rsvg-convert is not on PATH (Debian: apt-get install librsvg2-bin)");
    return result;
  }
  for (const std::string& svg : svgs) {
    const std::string png_path = fs::path(svg).replace_extension(".png").string();
    if (RunProgram({"rsvg-convert", "--background-color", "white", "-o", png_path, svg},
                   log.string()) != 0) {
      result.warnings.push_back("no PNG for " + svg +
                                ": rsvg-convert failed: " + Tail(log.string()));
      continue;
    }
    result.files.push_back(png_path);
  }
  fs::remove(log);
  return result;
}

}  // namespace fleetsim::report
