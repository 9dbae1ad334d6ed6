// What every harness in fuzz/ shares: the fuzz input written to a file (the readers take
// paths), and the rule that an InputError or a QuietExit is the expected answer to bad
// input. Anything else escaping a reader -- another exception, a crash, a sanitizer
// report, a timeout -- is a finding (docs/FUZZING.md).
//
//   extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
//     const std::string path = fuzz::WriteInput("trace.jsonl", data, size);
//     fuzz::ExpectInputErrorOnly([&] { Drain(OpenWorkload(path, "native")); });
//     return 0;
//   }
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <unistd.h>

#include "core/input_error.h"

namespace fleetsim::fuzz {

// A folder of this process's own under the temp folder (parallel fuzzing jobs each get one).
inline const std::filesystem::path& ScratchDir() {
  static const std::filesystem::path dir = [] {
    std::filesystem::path d =
        std::filesystem::temp_directory_path() / ("fleetsim-fuzz-" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    return d;
  }();
  return dir;
}

// Writes `text` to `relative` under `dir` (creating folders) and returns its path.
inline std::string WriteFile(const std::filesystem::path& dir, const std::string& relative,
                             std::string_view text) {
  const std::filesystem::path path = dir / relative;
  std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  return path.string();
}

// The fuzz input as the file `name` in the scratch folder.
inline std::string WriteInput(const std::string& name, const uint8_t* data, size_t size) {
  return WriteFile(ScratchDir(), name, std::string_view(reinterpret_cast<const char*>(data), size));
}

// Runs `body`; an InputError or QuietExit is bad input refused as documented. Any other
// exception propagates, terminates the process and so is reported by libFuzzer.
template <typename Body>
void ExpectInputErrorOnly(Body&& body) {
  try {
    body();
  } catch (const InputError&) {
  } catch (const QuietExit&) {
  }
}

}  // namespace fleetsim::fuzz
