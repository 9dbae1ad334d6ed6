// The model cards fleetsim ships (models/<name>/config.json), found by name, or any
// config.json given by path.
//
//   ModelCatalog catalog(ProjectRoot() / "models");
//   ModelCard card = catalog.Load("qwen3.8-27b");      // or "path/to/config.json"
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "model/model_card.h"

namespace fleetsim {

class ModelCatalog {
 public:
  explicit ModelCatalog(std::filesystem::path models_dir);

  // Names of the directories under models/ that hold a config.json, sorted.
  std::vector<std::string> Names() const;

  // A catalog name, a config.json path, or a directory holding one. An unknown name is
  // an InputError that lists the known ones.
  ModelCard Load(const std::string& name_or_path) const;

 private:
  std::filesystem::path models_dir_;
};

}  // namespace fleetsim
