// The JSON scanner (core/json_object.h) on one line held in memory: Parse must accept or
// refuse any bytes, and every conversion of a field it accepted must be safe.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/json_object.h"

namespace {

// Field names of the trace formats fleetsim reads, so conversions run on real values.
constexpr std::string_view kKeys[] = {"id",           "request_id",    "arrival_s",
                                      "arrival_ns",   "input_tokens",  "output_tokens",
                                      "block_hashes", "hash_ids",      "timestamp",
                                      "queued_ts",    "input_toks",    "output_toks",
                                      "input_length", "output_length", "hash_block_size"};

void Convert(const fleetsim::JsonValue& value) {
  int64_t i = 0;
  uint64_t u = 0;
  double d = 0;
  std::string text;
  std::vector<uint64_t> list;
  (void)value.ToInt64(i);
  (void)value.ToUint64(u);
  (void)value.ToDouble(d);
  (void)value.ToText(text);
  (void)value.ToUint64List(list);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  fleetsim::JsonObject object;
  std::string error;
  if (!object.Parse(text, error)) return 0;
  for (std::string_view key : kKeys) {
    if (const fleetsim::JsonValue* value = object.Find(key)) Convert(*value);
  }
  // The first key of the line too, whatever it is.
  if (const size_t open = text.find('"'); open != std::string_view::npos) {
    if (const size_t close = text.find('"', open + 1); close != std::string_view::npos) {
      if (const fleetsim::JsonValue* value = object.Find(text.substr(open + 1, close - open - 1)))
        Convert(*value);
    }
  }
  return 0;
}
