#!/usr/bin/env bash
# A sweep spread over MPI ranks writes the same sweep.csv as the same sweep in one process
# (point k runs on rank k % size, each alone; results do not depend on where).
#   sweep_mpi_test.sh <fleetsim> <mpiexec> <spec> <ranks>
set -euo pipefail
fleetsim=$1 mpiexec=$2 spec=$3 ranks=$4
work=$(mktemp -d /tmp/fleetsim-sweep-mpi.XXXXXX)
trap 'rm -rf "$work"' EXIT

"$fleetsim" sweep "$spec" --output-dir "$work/one" --quiet
"$mpiexec" -np "$ranks" --oversubscribe "$fleetsim" sweep "$spec" --output-dir "$work/many" --quiet
if ! cmp -s "$work/one/sweep.csv" "$work/many/sweep.csv"; then
  echo "sweep.csv on $ranks ranks differs from one process:"
  diff "$work/one/sweep.csv" "$work/many/sweep.csv" | head -20
  exit 1
fi
echo "sweep.csv identical on 1 and $ranks rank(s): $(($(wc -l < "$work/one/sweep.csv") - 1)) points"
