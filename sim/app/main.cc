// fleetsim: a discrete-event simulator of LLM inference serving at fleet scale.
#include <iostream>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "app/bundle_command.h"
#include "app/command_suggestions.h"
#include "app/export_command.h"
#include "app/inspect_command.h"
#include "app/report_command.h"
#include "app/run_command.h"
#include "app/sweep_command.h"
#include "app/validate_command.h"
#include "core/input_error.h"

#ifndef FLEETSIM_VERSION
#define FLEETSIM_VERSION "unknown"
#endif

int main(int argc, char** argv) {
  CLI::App app{"fleetsim " FLEETSIM_VERSION
               ": simulate LLM inference serving (vLLM engines, hybrid GDN models, fleets of "
               "instances behind routers) without GPUs",
               "fleetsim"};
  app.set_version_flag("--version", FLEETSIM_VERSION);
  app.require_subcommand(1);
  std::string command_line;
  for (int i = 0; i < argc; ++i)
    command_line += (i == 0 ? "" : " ") + std::string(argv[i]);
  fleetsim::AddRunCommand(app, command_line);
  fleetsim::AddSweepCommand(app, command_line);
  fleetsim::AddInspectCommand(app);
  fleetsim::AddValidateCommand(app);
  fleetsim::AddBundleCommand(app);
  fleetsim::AddExportCommand(app);
  fleetsim::AddReportCommand(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const fleetsim::QuietExit& e) {
    return e.code;
  } catch (const CLI::ParseError& e) {
    // A mistyped command or option is named with the closest known one; CLI11's own
    // message otherwise.
    const std::optional<std::string> hint = fleetsim::CommandLineHint(app, argc, argv);
    std::cerr << "fleetsim: error: " << (hint ? *hint : std::string(e.what()))
              << " (see fleetsim --help)\n";
    return fleetsim::kExitInputError;
  } catch (const fleetsim::InputError& e) {
    std::cerr << "fleetsim: error: " << e.what() << '\n';
    return fleetsim::kExitInputError;
  } catch (const std::exception& e) {
    std::cerr << "fleetsim: internal error: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
