// "Did you mean" for the command line: a mistyped subcommand (`fleetsim rnu`) or option
// (`fleetsim run --horizn 5`) gets the closest known name, from CLI11's own lists of the
// app's subcommands and options.
//
//   if (auto hint = CommandLineHint(app, argc, argv)) std::cerr << *hint;
#pragma once

#include <optional>
#include <string>

#include <CLI/CLI.hpp>

namespace fleetsim {

// The first word of the command line that names no subcommand or option where it stands,
// as "unknown command 'rnu' (did you mean 'run'?)"; nullopt when every word is known.
std::optional<std::string> CommandLineHint(CLI::App& app, int argc, const char* const* argv);

}  // namespace fleetsim
