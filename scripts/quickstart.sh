#!/usr/bin/env bash
# README command (a): install what is missing, build, and run the main job on the
# bundled default -- today `fleetsim inspect` of the 27B hybrid on an H200 with prefix
# caching (`fleetsim run` arrives with the engine issue).
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
