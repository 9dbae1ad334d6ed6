// The cluster-config reader (cluster/cluster_config.h) on the input as a YAML file. The
// hardware catalog and model cards it names come from the checkout, as in a real run.
#include <cstddef>
#include <cstdint>
#include <string>

#include "cluster/cluster_config.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = fleetsim::fuzz::WriteInput("cluster.yaml", data, size);
  fleetsim::fuzz::ExpectInputErrorOnly([&] {
    const fleetsim::ClusterConfig config = fleetsim::LoadClusterConfig(path);
    (void)config.TotalInstances();
  });
  return 0;
}
