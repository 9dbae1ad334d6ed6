#!/usr/bin/env bash
# The fleet's request-level results do not depend on how the run is spread: /requests and
# /instances (and /summary, /timeseries) of the 64-instance heterogeneous default fleet are
# identical without mpirun and at (ranks, threads) = (1,1), (2,1), (2,2), (3,1), (4,2).
#   determinism.sh <fleetsim> <mpiexec> <source dir> <policy> <capacity_weighted: true|false>
set -euo pipefail
source "$(dirname "$0")/same_tables.sh"
fleetsim=$1 mpiexec=$2 source=$3 policy=$4 weighted=$5
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

sed -e "s/^  policy: .*/  policy: $policy/" -e "s/^  capacity_weighted: .*/  capacity_weighted: $weighted/" \
  "$source/cluster_configs/default_fleet.yaml" > "$work/fleet.yaml"
grep -q "^  policy: $policy$" "$work/fleet.yaml"
grep -q "^  capacity_weighted: $weighted$" "$work/fleet.yaml"
workload=$source/tests/fleet/determinism_traffic.yaml

run() {  # name, then the launcher words (if any) before fleetsim
  local name=$1
  shift
  "$@" "$fleetsim" run --quiet --seed 5 --cluster "$work/fleet.yaml" --workload "$workload" \
    --output "$work/$name.h5" $extra
  "$fleetsim" export --csv "$work/$name.h5" > /dev/null
}

extra=""
run single
rows=$(($(wc -l < "$work/single.requests.csv") - 1))
[[ $rows -eq 1500 ]] || { echo "expected 1500 request rows, got $rows"; exit 1; }
instances=$(($(wc -l < "$work/single.instances.csv") - 1))
[[ $instances -eq 64 ]] || { echo "expected 64 instance rows, got $instances"; exit 1; }
used=$(tail -n +2 "$work/single.requests.csv" | cut -d, -f3 | sort -u | wc -l)
echo "$policy (capacity_weighted: $weighted): 1500 requests on $used instances"

for spec in 1:1 2:1 2:2 3:1 4:2; do
  ranks=${spec%%:*} threads=${spec##*:}
  extra="--threads $threads"
  run "np${ranks}t${threads}" "$mpiexec" -np "$ranks" --oversubscribe
  same_tables "$work" single "np${ranks}t${threads}" \
    "at $ranks rank(s) x $threads thread(s) from the single process"
  echo "  $ranks rank(s) x $threads thread(s): identical"
done
