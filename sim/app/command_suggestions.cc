#include "app/command_suggestions.h"

#include <string_view>
#include <vector>

#include "core/suggest.h"

namespace fleetsim {
namespace {

std::vector<std::string> SubcommandNames(CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands({}))
    names.push_back(sub->get_name());
  return names;
}

std::vector<std::string> OptionNames(CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* option : app.get_options()) {
    for (const std::string& name : option->get_lnames())
      names.push_back("--" + name);
    for (const std::string& name : option->get_snames())
      names.push_back("-" + name);
  }
  return names;
}

std::string Hint(std::string_view word, const std::vector<std::string>& known) {
  return DidYouMean(word, std::vector<std::string_view>(known.begin(), known.end()));
}

}  // namespace

std::optional<std::string> CommandLineHint(CLI::App& app, int argc, const char* const* argv) {
  CLI::App* current = &app;
  std::string path = "fleetsim";
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word == "--") break;
    if (word.starts_with("-")) {
      const std::string name = word.substr(0, word.find('='));
      const std::vector<std::string> options = OptionNames(*current);
      bool known = false;
      for (const std::string& option : options)
        known = known || option == name;
      if (!known && name.starts_with("--"))
        return "unknown option " + name + " for " + path + Hint(name, options);
      continue;
    }
    // A word that is not an option: a subcommand where the app has them, else a value.
    const std::vector<std::string> subcommands = SubcommandNames(*current);
    if (subcommands.empty()) continue;
    bool found = false;
    for (const std::string& sub : subcommands) {
      if (sub == word) {
        current = current->get_subcommand(sub);
        path += " " + sub;
        found = true;
        break;
      }
    }
    // An option's value (`--out DIR`) also comes here; only the first word after the
    // program or a subcommand must name one.
    const std::string previous = argv[i - 1];
    if (!found && !previous.starts_with("-")) {
      std::string list;
      for (const std::string& sub : subcommands)
        list += (list.empty() ? "" : ", ") + sub;
      return "unknown command '" + word + "' for " + path + Hint(word, subcommands) +
             " (commands: " + list + ")";
    }
  }
  return std::nullopt;
}

}  // namespace fleetsim
