// What a checkpoint covers, in one place (docs/CHECKPOINT.md, "What is refused"): a fleet
// using a feature whose state no part saves is refused before the run starts, naming the
// feature -- never checkpointed with that state missing, which would restart to other
// results. checkpoint_support.cc also holds the size guards of the structs whose fields
// are state or configuration: a new field stops the build there until its part saves it
// (or a refusal is added here) and the size is updated.
//
//   if (auto why = CheckpointRefusal(fleet)) throw OptionError("--checkpoint", *why);
#pragma once

#include <optional>
#include <string>

#include "fleet/fleet_setup.h"

namespace fleetsim {

// Why this fleet cannot be checkpointed, or nullopt when every part it uses is saved.
std::optional<std::string> CheckpointRefusal(const FleetSetup& fleet);

}  // namespace fleetsim
