#!/usr/bin/env bash
# README command (a): install what is missing, build, and run the main job on the
# bundled default: `fleetsim run` of the 27B hybrid on one RTX PRO 6000 with prefix
# caching (cluster_configs/single_node_hybrid_instance.yaml), serving the shipped
# example trace, on fleetsim's analytic bundle (built and cached on first use) -- then
# `fleetsim inspect` of the same model's cache arithmetic on an H200.
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
mkdir -p runs/out
echo "+ build/sim/fleetsim run --output runs/out/quickstart.h5"
build/sim/fleetsim run --output runs/out/quickstart.h5
echo
echo "+ build/sim/fleetsim inspect --model qwen3.8-27b --enable-prefix-caching --hardware H200-SXM"
build/sim/fleetsim inspect --model qwen3.8-27b --enable-prefix-caching --hardware H200-SXM
