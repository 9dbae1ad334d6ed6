// The bundle loader (perf/bundle.h) on a folder built from the input. The input is the
// bundle's files one after another, each opened by a marker line naming it:
//
//   #@ meta.yaml
//   model: llama-3.1-8b
//   #@ tp1/dense.csv
//   layer,tokens,time_us
//   ...
//
// Only meta.yaml and tp<1-8>/<name>.csv are written (other names are skipped), so the
// input never writes outside its folder. Text before the first marker is meta.yaml.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "fuzz_input.h"
#include "perf/bundle.h"

namespace {

constexpr std::string_view kMarker = "#@ ";

bool SafeName(std::string_view name) {
  if (name == "meta.yaml") return true;
  if (name.size() < 9 || name.substr(0, 2) != "tp" || name[2] < '1' || name[2] > '8' ||
      name[3] != '/' || name.substr(name.size() - 4) != ".csv")
    return false;
  for (char c : name.substr(4, name.size() - 8)) {
    if (c != '_' && (c < 'a' || c > 'z')) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::filesystem::path dir = fleetsim::fuzz::ScratchDir() / "bundle";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::string name = "meta.yaml", content;
  const auto flush = [&] {
    if (SafeName(name)) fleetsim::fuzz::WriteFile(dir, name, content);
    content.clear();
  };
  for (size_t start = 0; start < text.size();) {
    const size_t end = std::min(text.find('\n', start), text.size());
    const std::string_view line = text.substr(start, end - start);
    if (line.substr(0, kMarker.size()) == kMarker) {
      flush();
      name = std::string(line.substr(kMarker.size()));
    } else {
      content.append(line);
      if (end < text.size()) content.push_back('\n');
    }
    start = end + 1;
  }
  flush();
  fleetsim::fuzz::ExpectInputErrorOnly([&] {
    const fleetsim::Bundle bundle = fleetsim::LoadBundle(dir.string());
    for (int tp : bundle.TpDegrees())
      (void)bundle.ForTp(tp);
  });
  return 0;
}
