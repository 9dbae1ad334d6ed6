// The JSON-lines reader (core/json_lines.h) over a file: every line is an object or an
// InputError naming the line; the typed accessors refuse what they cannot convert.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/json_lines.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = fleetsim::fuzz::WriteInput("input.jsonl", data, size);
  fleetsim::fuzz::ExpectInputErrorOnly([&] {
    fleetsim::JsonLines lines(path);
    while (lines.Next()) {
      for (const char* key : {"id", "arrival_s", "input_tokens", "output_tokens", "block_hashes"}) {
        if (!lines.Has(key)) continue;
        fleetsim::fuzz::ExpectInputErrorOnly([&] { (void)lines.Int(key); });
        fleetsim::fuzz::ExpectInputErrorOnly([&] { (void)lines.Number(key); });
        fleetsim::fuzz::ExpectInputErrorOnly([&] { (void)lines.OptionalText(key); });
        fleetsim::fuzz::ExpectInputErrorOnly([&] { (void)lines.OptionalUint64List(key); });
      }
    }
  });
  return 0;
}
