#!/usr/bin/env bash
# /provenance's counters do not depend on the rank count: steps, events and out-of-grid
# cost lookups are summed over the ranks; and its meeting_time_s is 0 in one process and
# some of the wall time (0 < meeting_time_s <= wall_time_s) at several ranks (a maximum of per-rank sums once under-reported
# the lookups: 5,795 at 2 ranks and 3,307 at 4 for 9,275 in one process). Four Llama-3.1-8B
# instances on the measured RTX 4090 bundle (../shared, third-party data) serve prompts
# longer than its attention grid, so the lookups are many and spread over the ranks.
#   provenance_counters.sh <fleetsim> <mpiexec> <source dir>
set -euo pipefail
fleetsim=$1 mpiexec=$2 source=$3
bundle=$source/../shared/data/profiles/llmservingsim/perf/RTX4090/meta-llama/Llama-3.1-8B/bf16
if [[ ! -f $bundle/meta.yaml ]]; then
  echo "skipped: ../shared/data is absent (the measured RTX 4090 bundle)"
  [[ ${CI:-} == true ]] && exit 1
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/fleet.yaml" <<YAML
instance_groups:
  - {name: g, model: llama-3.1-8b, hardware: RTX-4090, bundle: $bundle, tp: 1, replicas: 4,
     engine: {max_model_len: 32768, num_gpu_blocks: 2588}}
YAML
cat > "$work/traffic.yaml" <<YAML
generator:
  seed: 3
  num_requests: 200
  arrivals: {process: poisson, rate_per_s: 4.0}
  input_tokens: {distribution: lognormal, median: 14000, sigma: 0.5, min: 16, max: 30000}
  output_tokens: {distribution: uniform, min: 20, max: 400}
YAML

counters() {  # an HDF5 file: its /provenance counters, one "name value" a line
  local name
  for name in steps events windows load_snapshots out_of_grid_lookups; do
    echo "$name $(h5dump -a "/provenance/$name" "$1" | sed -n 's/^ *(0): //p')"
  done
}

"$fleetsim" run --quiet --cluster "$work/fleet.yaml" --workload "$work/traffic.yaml" \
  --output "$work/single.h5"
counters "$work/single.h5" > "$work/single.txt"
attribute() {  # an HDF5 file, an attribute of /provenance: its value
  h5dump -a "/provenance/$2" "$1" | sed -n 's/^ *(0): //p'
}
meetings=$(attribute "$work/single.h5" meeting_time_s)
if [[ $meetings != 0 ]]; then
  echo "one process: meeting_time_s $meetings, expected 0"
  exit 1
fi
lookups=$(sed -n 's/^out_of_grid_lookups //p' "$work/single.txt")
if [[ -z $lookups || $lookups -eq 0 ]]; then
  echo "expected out-of-grid lookups in one process, got '$lookups'"
  exit 1
fi
for ranks in 2 3 4; do
  "$mpiexec" -np "$ranks" --oversubscribe "$fleetsim" run --quiet --cluster "$work/fleet.yaml" \
    --workload "$work/traffic.yaml" --output "$work/np$ranks.h5"
  counters "$work/np$ranks.h5" > "$work/np$ranks.txt"
  if ! diff "$work/single.txt" "$work/np$ranks.txt"; then
    echo "np $ranks: /provenance counters differ from the single process's (above)"
    exit 1
  fi
  meetings=$(attribute "$work/np$ranks.h5" meeting_time_s)
  wall=$(attribute "$work/np$ranks.h5" wall_time_s)
  if ! awk -v m="$meetings" -v w="$wall" 'BEGIN { exit !(m > 0 && m <= w) }'; then
    echo "np $ranks: meeting_time_s $meetings is not in (0, wall_time_s = $wall]"
    exit 1
  fi
  echo "np $ranks: $(tr '\n' ' ' < "$work/np$ranks.txt")meeting_time_s $meetings of $wall s"
done
