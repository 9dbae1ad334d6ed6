#include "model/model_catalog.h"

#include <algorithm>

#include "core/input_error.h"
#include "core/suggest.h"

namespace fleetsim {

namespace fs = std::filesystem;

ModelCatalog::ModelCatalog(fs::path models_dir) : models_dir_(std::move(models_dir)) {}

std::vector<std::string> ModelCatalog::Names() const {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(models_dir_, ec)) {
    if (entry.is_directory() && fs::exists(entry.path() / "config.json")) {
      names.push_back(entry.path().filename().string());
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

ModelCard ModelCatalog::Load(const std::string& name_or_path) const {
  const fs::path given(name_or_path);
  // The error_code forms: a name the file system refuses (over 255 bytes, say) is an
  // unknown model, not a filesystem_error.
  std::error_code ignored;
  // A NUL byte ends the path the system sees ("a\0b" would open "a"): no file has it.
  const bool nameable = name_or_path.find('\0') == std::string::npos;
  if (nameable && fs::is_regular_file(given, ignored)) {
    return LoadModelCard(given.string(), given.parent_path().filename().string());
  }
  if (nameable && fs::is_directory(given, ignored) && fs::exists(given / "config.json", ignored)) {
    return LoadModelCard((given / "config.json").string(), given.filename().string());
  }
  const fs::path card = models_dir_ / name_or_path / "config.json";
  if (nameable && name_or_path.find('/') == std::string::npos && fs::exists(card, ignored)) {
    return LoadModelCard(card.string(), name_or_path);
  }
  // A path (a slash, or a .json name) names a file the user expects to exist: say that it
  // does not, rather than that no model has that name.
  if (name_or_path.find('/') != std::string::npos || given.extension() == ".json") {
    if (fs::is_directory(given))
      throw OptionError("--model", "no config.json in folder " + QuotePath(name_or_path));
    throw OptionError("--model", "no such file " + QuotePath(name_or_path));
  }
  const std::vector<std::string> names = Names();
  std::string known;
  for (const std::string& name : names)
    known += (known.empty() ? "" : ", ") + name;
  throw OptionError("--model", "unknown model " + QuoteInput(name_or_path) +
                                   DidYouMean(name_or_path, {names.begin(), names.end()}) +
                                   " (known: " + known + "; or give a path to a config.json)");
}

}  // namespace fleetsim
