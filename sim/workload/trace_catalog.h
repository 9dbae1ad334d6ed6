// Real traces by name: `fleetsim run --workload conversation_trace` finds
// ../shared/data/traces/mooncake_fast25/conversation_trace.jsonl. A name is a trace's
// path under the traces folder without its extension ("mooncake_fast25/conversation_trace",
// "llmservingsim_vllm_bench/RTX4090/Llama-3.1-8B/requests"), or just its file stem when
// that is unique ("conversation_trace", "AzureLLMInferenceTrace_conv"). The folder is
// $FLEETSIM_TRACES, else ../shared/data/traces beside the project.
//
//   std::string path = ResolveWorkload("splitwise_conv");   // or any existing file, as is
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace fleetsim {

std::filesystem::path TracesDir();

// Every trace's name (path under TracesDir() without extension), sorted.
std::vector<std::string> TraceNames();

// An existing file stays as it is; otherwise a trace name. Throws InputError naming
// --workload, with the known names, when neither.
std::string ResolveWorkload(const std::string& name_or_path);

}  // namespace fleetsim
