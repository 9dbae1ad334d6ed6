// `fleetsim bundle collectives --hardware H --gpus N`: what the collective model says for a
// group of N GPUs of one catalog node -- the links NCCL would find, the graphs its search
// settles on, whether vLLM's custom all-reduce runs -- and, per message size, the time and
// choice of vLLM's tensor-parallel all-reduce and of NCCL's collectives. The model is
// perf/collective.h with the calibrated constants (docs/COLLECTIVES.md).
#pragma once

#include <CLI/CLI.hpp>

namespace fleetsim {

void AddCollectivesCommand(CLI::App& bundle);

}  // namespace fleetsim
