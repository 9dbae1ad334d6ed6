// `fleetsim validate vllm-bench <run-dir>`: replays a real vLLM run (its requests at their
// measured arrival times, its engine settings and KV capacity) through the simulator and
// compares simulated and measured TTFT, TPOT and E2E, and the per-second running and
// waiting series.
#pragma once

#include <CLI/CLI.hpp>

namespace fleetsim {

void AddValidateCommand(CLI::App& app);

}  // namespace fleetsim
