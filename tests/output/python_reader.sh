#!/usr/bin/env bash
# Runs the README's Python reader (tests/output/python_reader_test.py) on a fresh run of
# the default fleet with /steps, with Debian's python3 (python3-h5py, python3-pandas).
#   tests/output/python_reader.sh build/sim/fleetsim SOURCE_DIR
set -euo pipefail
fleetsim=$(realpath "$1")
source_dir=$(realpath "$2")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$fleetsim" run --num-reqs 300 --trace-steps --quiet --output "$work/run.h5"
/usr/bin/python3 "$source_dir/tests/output/python_reader_test.py" "$source_dir/README.md" "$work/run.h5"
