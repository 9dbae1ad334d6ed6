// What the cluster-config tests share: a config loaded from YAML text, and the located
// error it gives.
#pragma once

#include <string>

#include <gtest/gtest.h>

#include "cluster/cluster_config.h"
#include "core/input_error.h"
#include "support/input_error.h"
#include "support/temp_file.h"

namespace fleetsim::testing {

inline std::string ProjectFile(const std::string& relative) {
  return std::string(FLEETSIM_SOURCE_DIR) + "/" + relative;
}

inline ClusterConfig LoadYaml(const std::string& yaml) {
  const TempFile file("cluster.yaml", yaml);
  return LoadClusterConfig(file.path());
}

// The error loading `yaml` gives; it must name the file, `line` and `field`.
inline InputError LoadError(const std::string& yaml, int line, const std::string& field) {
  const TempFile file("cluster.yaml", yaml);
  const InputError e = CatchInputError([&] { LoadClusterConfig(file.path()); });
  EXPECT_EQ(e.file(), file.path()) << e.what();
  EXPECT_EQ(e.line(), line) << e.what();
  EXPECT_EQ(e.field(), field) << e.what();
  EXPECT_TRUE(Mentions(e, file.path() + ":" + std::to_string(line) + ": " + field)) << e.what();
  return e;
}

}  // namespace fleetsim::testing
