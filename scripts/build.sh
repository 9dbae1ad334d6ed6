#!/usr/bin/env bash
# Configures and builds fleetsim into build/ (tests included). Extra arguments go to cmake.
set -euo pipefail
cd "$(dirname "$0")/.."

generator=()
if [[ ! -f build/CMakeCache.txt ]] && command -v ninja >/dev/null; then generator=(-G Ninja); fi
cmake -S . -B build "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@"
cmake --build build --parallel "$(nproc)"
