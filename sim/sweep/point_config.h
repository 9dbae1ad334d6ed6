// The full cluster config of one sweep point, generated from the base config: the point's
// values go to the swept group (tp, replicas, engine keys), to `gateways` (policy,
// capacity_weighted) and to the group's pool (hardware); the pool grows nodes until first
// fit places every instance on it; relative paths (bundle:, a model or hardware path)
// become absolute, so the file works from any folder. `fleetsim run --cluster` of the
// file is exactly what the sweep runs for the point.
//
//   WritePointConfig(spec, point, "out/study/points/point-3.yaml");
#pragma once

#include <filesystem>
#include <string>

#include "sweep/sweep_points.h"
#include "sweep/sweep_spec.h"

namespace fleetsim {

// The point's cluster config as YAML text (a comment naming the sweep and point first).
std::string PointConfigYaml(const SweepSpec& spec, const SweepPoint& point);

// Writes PointConfigYaml to `path` (as path.tmp, renamed into place).
void WritePointConfig(const SweepSpec& spec, const SweepPoint& point,
                      const std::filesystem::path& path);

}  // namespace fleetsim
