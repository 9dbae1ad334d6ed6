// The nccl-tests output reader (perf/kernel_db/nccl_tests_output.h) on the input as what
// an nccl-tests binary printed, read as a reduction (all_reduce) and as a collective
// without one (all_gather), then compared with the collective model on an 8-GPU H100
// node of the checkout's catalog, as `fleetsim bundle compare-collectives --nccl-tests`.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/project_paths.h"
#include "fuzz_input.h"
#include "model/hardware.h"
#include "perf/kernel_db/collective_error.h"
#include "perf/kernel_db/nccl_tests_output.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const fleetsim::HardwareSpec h100 =
      fleetsim::LoadHardware(fleetsim::HardwareCatalogDir(), "H100-SXM");
  const std::string path = fleetsim::fuzz::WriteInput("nccl_tests.txt", data, size);
  for (const char* op : {"all_reduce", "all_gather"}) {
    fleetsim::fuzz::ExpectInputErrorOnly([&] {
      const fleetsim::MeasuredCollectives t = fleetsim::LoadNcclTestsOutput(path, op);
      (void)fleetsim::CompareCollectives(t, h100, fleetsim::CollectiveConstants{});
    });
  }
  return 0;
}
