// Importers for the public request traces fleetsim reads as they are (formats and quirks:
// ../shared/data/README.md, section 1), each streamed one record at a time:
//   azure     Azure LLM inference trace 2023 CSV: TIMESTAMP (absolute wall clock with a
//             7-digit fraction, 100 ns ticks), ContextTokens, GeneratedTokens
//   vidur     Vidur's processed CSV: arrived_at (seconds since the first request),
//             num_prefill_tokens, num_decode_tokens
//   mooncake  Mooncake JSONL: timestamp (integer ms), input_length, output_length,
//             hash_ids (prefix-identifying ids of 512-token blocks)
// Arrivals are rebased so that the first request arrives at 0.
#pragma once

#include <memory>
#include <string>

#include "workload/workload_source.h"

namespace fleetsim {

std::unique_ptr<WorkloadSource> OpenAzureCsv(const std::string& path);
std::unique_ptr<WorkloadSource> OpenVidurCsv(const std::string& path);
std::unique_ptr<WorkloadSource> OpenMooncakeJsonl(const std::string& path);

// Nanoseconds since 1970-01-01 of "YYYY-MM-DD HH:MM:SS[.fffffff]" (no time zone), exactly
// (integer arithmetic); false when malformed.
bool ParseWallClock(std::string_view text, int64_t& ns);

}  // namespace fleetsim
