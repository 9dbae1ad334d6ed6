// The generator-spec reader (workload/generator_spec.h) on the input as a YAML file, then
// the first requests of the workload it describes: parsing promises that generating
// never fails halfway, so an InputError from Next() is reported as a finding.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "core/yaml_section.h"
#include "fuzz_input.h"
#include "workload/generator.h"
#include "workload/generator_spec.h"
#include "workload/workload_source.h"

namespace {

constexpr int kRequests = 32;  // enough to reach sessions' later turns and shared prefixes

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = fleetsim::fuzz::WriteInput("spec.yaml", data, size);
  std::unique_ptr<fleetsim::WorkloadSource> source;
  fleetsim::fuzz::ExpectInputErrorOnly([&] {
    (void)fleetsim::workload_gen::GeneratorSpec::Parse(fleetsim::LoadYamlFile(path));
    source = fleetsim::OpenGeneratedWorkload(path);
  });
  if (!source) return 0;
  try {
    for (int n = 0; n < kRequests && source->Next(); ++n) {
    }
  } catch (const fleetsim::InputError& e) {
    std::fprintf(stderr, "generator_spec_fuzz: a parsed spec failed while generating: %s\n",
                 e.what());
    std::abort();
  }
  return 0;
}
