#!/usr/bin/env bash
# Builds fleetsim (the binary and every test) in each build type people use -- Release,
# RelWithDebInfo and Debug -- with warnings as errors, into build-release/,
# build-relwithdebinfo/ and build-debug/, and runs `fleetsim --version` and one small run
# from each. Slow (each configuration builds everything); uses ccache when present and
# runs under nice. Extra arguments go to cmake.
#   scripts/check_builds.sh [Release|RelWithDebInfo|Debug ...]   (default: all three)
set -euo pipefail
cd "$(dirname "$0")/.."
types=("$@")
[[ ${#types[@]} -gt 0 ]] || types=(Release RelWithDebInfo Debug)
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
jobs=$(( $(nproc) < 2 ? 1 : 2 ))
export OMPI_MCA_btl_vader_single_copy_mechanism=none
for type in "${types[@]}"; do
  dir=build-${type,,}
  echo "check_builds: $type in $dir/"
  [[ -f $dir/CMakeCache.txt ]] && generator=()
  nice cmake -S . -B "$dir" "${generator[@]}" -DCMAKE_BUILD_TYPE="$type" -DFLEETSIM_WERROR=ON \
    "${launcher[@]}" >"$dir.log" 2>&1 || { cat "$dir.log"; exit 1; }
  nice cmake --build "$dir" --parallel "$jobs" >>"$dir.log" 2>&1 ||
    { tail -40 "$dir.log"; echo "check_builds: $type failed (log: $dir.log)"; exit 1; }
  "$dir/sim/fleetsim" --version
  "$dir/sim/fleetsim" run --num-reqs 50 --quiet --output "$dir/check.h5"
  echo "check_builds: $type builds and runs"
done
