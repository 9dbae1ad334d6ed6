#!/usr/bin/env bash
# README command (b): install what is missing, build, and run every test -- unit tests,
# CLI tests and the multi-rank MPI tests (mpirun --oversubscribe).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
# Open MPI refuses root without these; in containers the CMA copy path warns.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none
ctest --test-dir build --output-on-failure --timeout 600
