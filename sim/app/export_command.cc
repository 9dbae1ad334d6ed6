#include "app/export_command.h"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>

#include "core/input_error.h"
#include "output/run_tables.h"
#include "output/table_reader.h"

namespace fleetsim {
namespace {

namespace fs = std::filesystem;

struct ExportOptions {
  std::string file;
  std::optional<std::string> dir;
  bool csv = false;
};

void Export(const ExportOptions& options) {
  if (!options.csv) throw OptionError("--csv", "choose an export format (only --csv exists)");
  if (!output::HasTable(options.file, "/summary")) {
    throw InputError(options.file, 0, "", "not a fleetsim run file (no /summary table)");
  }
  const fs::path source(options.file);
  const fs::path dir = options.dir ? fs::path(*options.dir) : source.parent_path();
  if (!dir.empty() && !fs::is_directory(dir))
    throw OptionError("--dir", "no such directory " + dir.string());
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

}  // namespace

void AddExportCommand(CLI::App& app) {
  auto options = std::make_shared<ExportOptions>();
  CLI::App* cmd = app.add_subcommand("export", "Write a run's HDF5 tables as CSV files");
  cmd->add_option("file", options->file, "A run's HDF5 file")->required()->check(CLI::ExistingFile);
  cmd->add_flag("--csv", options->csv, "CSV, one file per table");
  cmd->add_option("--dir", options->dir, "Folder for the CSV files (default: beside the run file)");
  cmd->callback([options]() { Export(*options); });
}

}  // namespace fleetsim
