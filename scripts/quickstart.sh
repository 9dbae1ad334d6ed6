#!/usr/bin/env bash
# README command (a): install what is missing, build, and run the main job on the
# bundled default: `fleetsim run` under `mpirun -np 2` -- the default fleet
# (cluster_configs/default_fleet.yaml: 64 Llama-3.1-8B instances on an H100 pool and an
# A100 pool behind two gateways) serving a minute of generated chat traffic, on
# fleetsim's analytic bundles (built and cached on first use) -- then `fleetsim inspect`
# of the 27B hybrid's cache arithmetic on an H200. It ends with the one command that draws
# the run: `build/sim/fleetsim report runs/out/quickstart.h5`.
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
if [[ $(id -u) == 0 ]]; then  # Open MPI refuses to run as root unless told
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
export OMPI_MCA_btl_vader_single_copy_mechanism=none  # quiet in containers
echo "+ mpirun -np 2 --oversubscribe build/sim/fleetsim run --output runs/out/quickstart.h5"
mpirun -np 2 --oversubscribe build/sim/fleetsim run --output runs/out/quickstart.h5
echo
echo "+ build/sim/fleetsim inspect --model qwen3.8-27b --enable-prefix-caching --hardware H200-SXM"
build/sim/fleetsim inspect --model qwen3.8-27b --enable-prefix-caching --hardware H200-SXM
echo
echo "quickstart: to see the run, one more command writes an HTML page (opens offline):"
echo "  build/sim/fleetsim report runs/out/quickstart.h5   # -> runs/out/quickstart-report/report.html"
