#include "app/report_command.h"

#include <cstdio>
#include <filesystem>
#include <memory>

#include "core/input_error.h"
#include "report/report_page.h"

namespace fleetsim {
namespace {

namespace fs = std::filesystem;

struct ReportCommandOptions {
  std::vector<std::string> files;
  std::string out;
  std::string images = "svg,png";
  bool quiet = false;
};

void Report(const ReportCommandOptions& options) {
  report::ReportOptions report;
  report.files = options.files;
  // Default: beside the first file, named after it (runs/out/run.h5 -> runs/out/run-report/).
  const fs::path first(options.files.front());
  report.out_dir = options.out.empty()
                       ? (first.parent_path() / (first.stem().string() + "-report")).string()
                       : options.out;
  if (options.images == "none") {
    report.svg = report.png = false;
  } else if (options.images == "svg") {
    report.png = false;
  } else if (options.images != "svg,png") {
    throw OptionError(
        "--images", "one of svg,png (the default), svg or none, not " + QuoteInput(options.images));
  }
  const report::ReportOutput out = report::WriteReport(report);
  for (const std::string& warning : out.warnings)
    std::fprintf(stderr, "fleetsim: warning: %s\n", warning.c_str());
  if (options.quiet) return;
  std::printf("wrote %s (%zu charts)\n", out.page.c_str(), out.charts.size());
  if (!out.images.empty())
    std::printf("and %zu images beside it (%s)\n", out.images.size(), options.images.c_str());
}

}  // namespace

void AddReportCommand(CLI::App& app) {
  auto options = std::make_shared<ReportCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "report",
      "Write one HTML page (opens offline) of run files and sweep files: latency CDFs, "
      "the fleet over time, load across instances, SLOs, goodput; each chart also as SVG/PNG");
  cmd->add_option("files", options->files,
                  "Run files (fleetsim run --output) and sweep files (sweep.h5); several are "
                  "overlaid")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--out", options->out,
                  "Folder for report.html and the images (default: <first file>-report/ "
                  "beside the first file)");
  cmd->add_option("--images", options->images,
                  "Chart images beside the page: svg,png (node and rsvg-convert), svg, or none")
      ->capture_default_str();
  cmd->add_flag("--quiet", options->quiet, "Print nothing on success");
  cmd->callback([options]() { Report(*options); });
}

}  // namespace fleetsim
