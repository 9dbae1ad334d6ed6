// Shared helpers for engine tests: shipped model cards, an error builder that turns
// refusals into InputErrors naming the setting, and an engine on a test bundle.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "core/input_error.h"
#include "core/project_paths.h"
#include "engine/engine_config.h"
#include "engine/engine_setup.h"
#include "model/model_catalog.h"
#include "support/input_error.h"

namespace fleetsim::testing {

inline const ModelCard& Card(const std::string& name) {
  static std::map<std::string, ModelCard> cache;
  auto found = cache.find(name);
  if (found == cache.end()) found = cache.emplace(name, ModelCatalog(ModelsDir()).Load(name)).first;
  return found->second;
}

inline InputError SettingErrorFor(std::string_view setting, const std::string& message) {
  return InputError("test", 0, std::string(setting), message);
}

inline ResolvedEngineConfig Resolve(const ModelCard& card, const EngineConfig& config,
                                    std::optional<int64_t> gpu_memory = std::nullopt) {
  return ResolveEngineConfig(card, config, gpu_memory, SettingErrorFor);
}

// An engine of `model` with `config` on the bundle in `bundle_dir`, its pool `blocks` blocks,
// no host overhead per step.
inline EngineSetup EngineWithBlocks(const std::string& model, const std::string& bundle_dir,
                                    const EngineConfig& config, int64_t blocks) {
  KvBudget budget;
  budget.num_blocks = blocks;
  return BuildEngineSetup(Card(model), LoadBundle(bundle_dir), config, budget, 0, SettingErrorFor);
}

}  // namespace fleetsim::testing
