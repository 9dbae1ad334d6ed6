#!/usr/bin/env bash
# A parallel run's window length (one load-snapshot epoch) is a speed knob, not part of the
# model: with a policy that reads no load (round robin, random), staleness changes only how
# far the ranks advance between meetings. Windows of one step (the lookahead) and of 1,400
# steps (not a divisor of the 1 s time-series interval) must give identical /requests, /instances, /summary and /timeseries -- which checks
# that an instance's results do not depend on where a run stops and resumes it, and that
# the time series pauses at the same points inside a long window. A 3.3 s staleness gives
# windows capped at 1 s (window_clock.h, kMaxWindow) inside its epochs.
#   window_length.sh <fleetsim> <mpiexec> <source dir> <policy>
set -euo pipefail
source "$(dirname "$0")/same_tables.sh"
fleetsim=$1 mpiexec=$2 source=$3 policy=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for staleness in 0.0005 0.7 3.3; do
  sed -e "s/^  policy: .*/  policy: $policy/" -e "s/^  staleness_s: .*/  staleness_s: $staleness/" \
    "$source/cluster_configs/default_fleet.yaml" > "$work/fleet_$staleness.yaml"
  grep -q "^  staleness_s: $staleness$" "$work/fleet_$staleness.yaml"
  grep -q "^  gateway_to_instance_us: 500$" "$work/fleet_$staleness.yaml"
done

run() {  # name, staleness, then the launcher words (if any) before fleetsim
  local name=$1 staleness=$2
  shift 2
  "$@" "$fleetsim" run --seed 5 --cluster "$work/fleet_$staleness.yaml" \
    --workload "$source/tests/fleet/determinism_traffic.yaml" --output "$work/$name.h5" \
    > "$work/$name.log"
  "$fleetsim" export --csv "$work/$name.h5" > /dev/null
}

run short 0.0005
run long 0.7
run long_np2 0.7 "$mpiexec" -np 2 --oversubscribe
run capped 3.3  # windows of at most 1 s inside 3.3 s epochs
windows() { grep -oE '[0-9]+ windows' "$work/$1.log" | cut -d' ' -f1; }
echo "$policy: $(windows short) windows of 0.5 ms, $(windows long) of 0.7 s, $(windows capped) of at most 1 s"
(( $(windows short) > 10 * $(windows long) )) || { echo "the window lengths did not differ"; exit 1; }
for other in long long_np2 capped; do
  same_tables "$work" short "$other" "between 0.5 ms windows and $other"
done
echo "  identical at 1 and 2 ranks and with capped windows"
