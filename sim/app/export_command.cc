#include "app/export_command.h"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>

#include "core/input_error.h"
#include "output/run_tables.h"
#include "output/table_reader.h"
#include "report/chrome_trace.h"

namespace fleetsim {
namespace {

namespace fs = std::filesystem;

struct ExportOptions {
  std::string file;
  std::optional<std::string> dir;
  bool csv = false;
  bool trace = false;
};

void ExportCsv(const ExportOptions& options, const fs::path& dir) {
  const fs::path source(options.file);
  const std::pair<const char*, output::TableSchema> tables[] = {
      {"requests", output::RequestSchema()},
      {"instances", output::InstanceSchema()},
      {"summary", output::SummarySchema()},
      {"timeseries", output::TimeseriesSchema()},
      {"steps", output::StepSchema()}};
  for (const auto& [name, schema] : tables) {
    const std::string dataset = std::string("/") + name;
    if (!output::HasTable(options.file, dataset)) continue;
    const fs::path target = dir / (source.stem().string() + "." + name + ".csv");
    std::ofstream out(target);
    if (!out) throw OptionError("--dir", "cannot write " + target.string());
    output::WriteCsv(out, schema, output::ReadTable(options.file, dataset, schema));
    std::cout << target.string() << '\n';
  }
}

void ExportTrace(const ExportOptions& options, const fs::path& dir) {
  const fs::path target = dir / (fs::path(options.file).stem().string() + ".trace.json");
  std::ofstream out(target, std::ios::binary);
  if (!out) throw OptionError("--dir", "cannot write " + target.string());
  const report::TraceCounts counts = report::WriteChromeTrace(options.file, out);
  if (!out.flush()) throw OptionError("--dir", "cannot write " + target.string());
  if (!counts.has_steps) {
    std::cerr << "fleetsim: warning: " << options.file
              << " has no /steps (run with --trace-steps): the trace holds requests only\n";
  }
  std::cout << target.string() << '\n';
}

void Export(const ExportOptions& options) {
  if (!options.csv && !options.trace)
    throw OptionError("--csv", "choose what to export: --csv, --trace, or both");
  if (!output::HasTable(options.file, "/summary")) {
    throw InputError(options.file, 0, "", "not a fleetsim run file (no /summary table)");
  }
  const fs::path dir = options.dir ? fs::path(*options.dir) : fs::path(options.file).parent_path();
  if (!dir.empty()) {
    std::error_code error;
    fs::create_directories(dir, error);
    if (error || !fs::is_directory(dir))
      throw OptionError(
          "--dir", "cannot create folder " + dir.string() + (error ? ": " + error.message() : ""));
  }
  if (options.csv) ExportCsv(options, dir);
  if (options.trace) ExportTrace(options, dir);
}

}  // namespace

void AddExportCommand(CLI::App& app) {
  auto options = std::make_shared<ExportOptions>();
  CLI::App* cmd = app.add_subcommand(
      "export", "Write a run's tables as CSV files, or the run as a Chrome/Perfetto trace");
  cmd->add_option("file", options->file, "A run's HDF5 file")->required()->check(CLI::ExistingFile);
  cmd->add_flag("--csv", options->csv,
                "CSV, one file per table: <run>.requests.csv, .instances.csv, .summary.csv, "
                ".timeseries.csv and, with /steps, .steps.csv");
  cmd->add_flag("--trace", options->trace,
                "<run>.trace.json, a Chrome/Perfetto trace (ui.perfetto.dev, chrome://tracing): "
                "engine steps per instance (needs run --trace-steps) and requests as spans");
  cmd->add_option("--dir", options->dir,
                  "Folder for the files, created when missing (default: beside the run file)");
  cmd->callback([options]() { Export(*options); });
}

}  // namespace fleetsim
