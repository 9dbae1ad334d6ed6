// What a checkpoint covers, in one place (docs/CHECKPOINT.md, "What is refused"): a fleet
// using a feature whose state no part saves is refused before the run starts, naming the
// feature -- never checkpointed with that state missing, which would restart to other
// results. checkpoint_support.cc also holds the size guards of the structs whose fields
// are state or configuration: a new field stops the build there until its part saves it
// (or the feature is listed in UncoveredFeatures) and the size is updated.
//
//   if (auto why = CheckpointRefusal(fleet)) throw OptionError("--checkpoint", *why);
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>

#include "fleet/fleet_setup.h"

namespace fleetsim {

// A feature an instance group can use whose state no part saves.
struct UncoveredFeature {
  // Whether group `group` of `fleet` uses it.
  bool (*used_by)(const FleetSetup& fleet, std::size_t group);
  // What the refusal names for that group, e.g. "dp 2 (data parallelism with expert
  // parallelism)".
  std::string (*what)(const FleetSetup& fleet, std::size_t group);
};

// The features checkpoints do not cover yet: add one here when a new feature's state is
// not saved (empty while every feature a fleet can use is covered).
std::span<const UncoveredFeature> UncoveredFeatures();

// Why this fleet cannot be checkpointed -- "instance group G: WHAT is not covered by
// checkpoints yet" for the first group using one of `features` -- or nullopt.
std::optional<std::string> CheckpointRefusal(
    const FleetSetup& fleet, std::span<const UncoveredFeature> features = UncoveredFeatures());

}  // namespace fleetsim
