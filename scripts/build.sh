#!/usr/bin/env bash
# Configures and builds fleetsim into build/ (tests included), warnings as errors (CI builds
# through here). Extra arguments go to cmake, e.g. -DCMAKE_BUILD_TYPE=Release.
set -euo pipefail
cd "$(dirname "$0")/.."

generator=()
if [[ ! -f build/CMakeCache.txt ]] && command -v ninja >/dev/null; then generator=(-G Ninja); fi
cmake -S . -B build "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFLEETSIM_WERROR=ON "$@"
cmake --build build --parallel "$(nproc)"
