#!/usr/bin/env bash
# README command (a): install what is missing, build, and run the main job on the
# bundled default: `fleetsim inspect` of the 27B hybrid on an H200 with prefix caching,
# then -- where ../shared/data holds the measured bundle it needs -- `fleetsim run` of
# the one-GPU example cluster on a real vLLM run's 300 requests.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
echo "quickstart: building (log in build/quickstart-build.log)"
mkdir -p build
if ! scripts/build.sh >build/quickstart-build.log 2>&1; then
  cat build/quickstart-build.log >&2
  echo "quickstart: build failed (log above)" >&2
  exit 1
fi
echo "+ build/sim/fleetsim inspect --model qwen3.8-27b --enable-prefix-caching --hardware H200-SXM"
build/sim/fleetsim inspect --model qwen3.8-27b --enable-prefix-caching --hardware H200-SXM

trace=../shared/data/traces/llmservingsim_vllm_bench/RTX4090/Llama-3.1-8B/requests.jsonl
if [[ -f "$trace" ]]; then
  mkdir -p runs/out
  echo
  echo "+ build/sim/fleetsim run --cluster cluster_configs/single_node_single_instance.yaml --workload $trace --output runs/out/quickstart.h5"
  build/sim/fleetsim run --cluster cluster_configs/single_node_single_instance.yaml \
    --workload "$trace" --output runs/out/quickstart.h5
else
  echo "quickstart: ../shared/data is absent; skipping the example run (it uses a measured bundle from there)"
fi
