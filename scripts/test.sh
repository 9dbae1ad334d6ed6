#!/usr/bin/env bash
# README command (b): install what is missing, build, and run every test -- unit tests,
# CLI tests and the multi-rank MPI tests (mpirun --oversubscribe). CI runs it without
# arguments (.ci/run).
#
#   scripts/test.sh          the whole suite
#   scripts/test.sh --fast   only the tests labelled `fast` (ctest -L fast): the unit tests,
#                            without the simulations through the binary, MPI, Slurm and
#                            studies (the labels are described in tests/labels.cmake)
set -euo pipefail
cd "$(dirname "$0")/.."
labels=()
if [[ $# -eq 1 && "$1" == --fast ]]; then
  labels=(-L fast)
elif [[ $# -ne 0 ]]; then
  echo "usage: scripts/test.sh [--fast]" >&2
  exit 2
fi
scripts/install-deps.sh
scripts/build.sh
# Open MPI refuses root without these; in containers the CMA copy path warns.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none
ctest --test-dir build --output-on-failure --timeout 600 "${labels[@]}"
