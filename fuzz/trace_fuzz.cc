// One trace importer (workload/workload_source.h, trace_importers.h, vllm_bench_reader.h)
// over a file: FLEETSIM_FUZZ_FORMAT (set by fuzz/CMakeLists.txt) is the format OpenWorkload
// is told -- native, vllm-bench, azure, vidur, mooncake or auto. Every request it accepts
// is checked against the contract WorkloadSource promises (arrival order, no negative
// times or lengths); a violation aborts, so it is reported like a crash.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "fuzz_input.h"
#include "workload/workload_source.h"

#ifndef FLEETSIM_FUZZ_FORMAT
#error "fuzz/CMakeLists.txt defines FLEETSIM_FUZZ_FORMAT"
#endif

namespace {

// Not more requests than this per input (a line is at least a few bytes, so a fuzz input
// of max_len bytes holds far fewer).
constexpr int kMaxRequests = 100000;

[[noreturn]] void Violation(const char* what) {
  std::fprintf(stderr, "trace_fuzz (%s): accepted request breaks the contract: %s\n",
               FLEETSIM_FUZZ_FORMAT, what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string name = std::string("trace.") + FLEETSIM_FUZZ_FILE_EXTENSION;
  const std::string path = fleetsim::fuzz::WriteInput(name, data, size);
  fleetsim::fuzz::ExpectInputErrorOnly([&] {
    const std::unique_ptr<fleetsim::WorkloadSource> source =
        fleetsim::OpenWorkload(path, FLEETSIM_FUZZ_FORMAT);
    fleetsim::SimTime last = 0;
    for (int n = 0; n < kMaxRequests; ++n) {
      const std::optional<fleetsim::WorkloadRequest> r = source->Next();
      if (!r) break;
      if (r->arrival < 0) Violation("negative arrival");
      if (r->arrival < last) Violation("arrivals out of order");
      if (r->input_tokens < 0 || r->output_tokens < 0) Violation("negative token count");
      if (r->hash_block_size < 0) Violation("negative hash_block_size");
      last = r->arrival;
      if (r->hash_block_size > 0)
        fleetsim::fuzz::ExpectInputErrorOnly([&] { (void)fleetsim::MapBlockHashes(*r, 16); });
    }
  });
  return 0;
}
