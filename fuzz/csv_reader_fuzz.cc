// The CSV reader (core/csv_reader.h) over a file: each column the header names is read
// as text, integer and number on every record; problems are InputErrors.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/csv_reader.h"
#include "fuzz_input.h"

namespace {

// The header's names as the input spells them (at most 16): the reader keeps its own.
std::vector<std::string> HeaderNames(std::string_view text) {
  std::vector<std::string> names;
  const std::string_view header = text.substr(0, text.find('\n'));
  size_t start = 0;
  while (start <= header.size() && names.size() < 16) {
    const size_t comma = std::min(header.find(',', start), header.size());
    std::string name(header.substr(start, comma - start));
    if (!name.empty() && name.back() == '\r') name.pop_back();
    names.push_back(std::move(name));
    start = comma + 1;
  }
  return names;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = fleetsim::fuzz::WriteInput("input.csv", data, size);
  const std::vector<std::string> names =
      HeaderNames(std::string_view(reinterpret_cast<const char*>(data), size));
  fleetsim::fuzz::ExpectInputErrorOnly([&] {
    fleetsim::CsvReader csv(path);
    fleetsim::fuzz::ExpectInputErrorOnly([&] { csv.RequireColumns({"layer", "time_us"}); });
    while (csv.Next()) {
      for (const std::string& name : names) {
        if (!csv.HasColumn(name)) continue;
        fleetsim::fuzz::ExpectInputErrorOnly([&] { (void)csv.Text(name); });
        fleetsim::fuzz::ExpectInputErrorOnly([&] { (void)csv.Int(name); });
        fleetsim::fuzz::ExpectInputErrorOnly([&] { (void)csv.Number(name); });
      }
    }
  });
  return 0;
}
